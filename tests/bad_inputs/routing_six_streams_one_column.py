# expect: stream routing 8
# why: six streams from three cores of one column into its memtile: a core tile has 4 wires south.
from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime


@design(device="npu1_1col")
def unroutable(X: Tensor[3, 1024, i32], Y: Tensor[3, 1024, i32]):
    lo = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="lo")
    hi = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="hi")

    @herd(rows=3, anchor=(0, 3))
    def core(x, y):
        with lo[y].produce(), hi[y].produce():
            pass

    with runtime() as rt:
        rt.drain(lo[:], X)
        rt.drain(hi[:], Y)
