"""The names the AIE API defines in namespace ``aie``: what tells a name the host stand-in
lacks (``aie::reverse``: the AIE API has it, aiedsl's host header does not) from a name that is
no AIE API name at all (``aie::addd``, a typo), when g++ says ``'X' is not a member of 'aie'``
(:func:`aiedsl.kernels.host_errors.explain`).

Read from the AIE API 2026.1's public headers (``include/aie_api/*.hpp`` but ``detail/`` and
``adf/``, as mirrored in github.com/jgmelber/aie_api at 2b7eedf, "Sync to latest 2026.1", the
version mlir-aie ships): every function, class, alias, enum, concept and constant declared at
the namespace's own scope (not inside a class or ``aie::detail``), and the nested namespace
``operators``. A name added by a later AIE API is taken for a typo until it is listed here;
g++'s own "did you mean" is passed on either way.
"""

from __future__ import annotations

AIE_API_NAMES = frozenset("""
    Accum AccumClass AccumElemBaseType AccumOrOp AnyOf ArithmeticType AsyncIOBuffer BlockType
    BlockVector BlockVectorOp BlockVectorOrOp ComplexElem ComplexFloatVector ComplexIntegralVector
    ComplexVector ConvertibleTo DecoratedElemBaseOrBlockType DecoratedElemBaseType Elem
    ElemBaseOrBlockType ElemBaseType ElemOrOp IOBuffer Mask Mmul MmulOrOp NativeAccumType NativeDim
    NativeOrSlidingDim NativeVectorType Operation PackableFrom ParallelLUT RealElem RealVector
    RegularOrBlockVector RegularOrBlockVectorOrOp SameAs SlidingDim SparseVector SparseVectorOrOp
    TensorBufferStream TensorBufferStreamOp TensorBufferStreamOrOp TensorDim TupleLike
    UnpackableFrom Vector VectorOrOp abs abs_square accauto accum accumulate add add_byte
    add_reduce add_reduce_v assume_zero_padding_t back_idx begin begin_circular begin_pattern
    begin_random_circular begin_restrict_vector begin_unaligned_vector begin_vector
    begin_vector_circular begin_vector_random_circular begin_vectors binary_op binary_op_common
    binary_op_common_const binary_op_common_ref bit_and bit_not bit_or bit_xor block_vector
    block_vector_input_buffer_stream block_vector_output_buffer_stream
    block_vector_restrict_input_buffer_stream block_vector_restrict_output_buffer_stream broadcast
    broadcast_vector cbegin cbegin_circular cbegin_pattern cbegin_random_circular
    cbegin_restrict_vector cbegin_unaligned_vector cbegin_vector cbegin_vector_circular
    cbegin_vector_random_circular cbegin_vectors cend cfr circular_iterator clamp concat conj
    const_circular_iterator const_pattern_iterator const_random_circular_iterator
    const_restrict_vector_iterator const_unaligned_vector_iterator const_vector_circular_iterator
    const_vector_iterator const_vector_random_circular_iterator contains contiguous_dim cos
    data_layout dim_2d dim_3d div downshift dynamic_extent end eq equal exp2 extents fft_dit
    fft_dit_r2_stage fft_dit_r3_stage fft_dit_r4_stage fft_dit_r5_stage filter filter_even
    filter_mode filter_odd from_vector front_idx ge get_rounding get_saturation gt imag
    interleave_butterfly interleave_butterfly_half interleave_crossover interleave_custom
    interleave_custom_static interleave_unzip interleave_unzip_mode interleave_zip
    interleave_zip_mode inv invsqrt is_accum_op is_accum_op_v is_bfp_vector_op is_binary_op
    is_binary_op_v is_block_vector_op is_block_vector_op_v is_complex is_complex_op is_complex_op_v
    is_ct_elem_zero is_elem is_elem_op is_elem_op_v is_floating_point is_lut is_lut_v is_mmul
    is_mmul_op is_mmul_or_op_v is_mmul_v is_op_v is_real_op is_real_op_v is_same_accum_v
    is_same_vector is_same_vector_v is_sparse_vector_op is_sparse_vector_op_v is_tbs is_tbs_op
    is_tbs_op_v is_unary_op is_unary_op_v is_valid_elem_op is_valid_elem_op_v is_valid_mul_op
    is_valid_mul_op_v is_valid_size is_valid_size_v is_vector_op is_vector_op_v le linear_approx
    load_floor_bytes_v load_floor_v load_unaligned_v load_v logical_downshift loop_idx loop_options
    lt lut mac mac_square make_restrict_tensor_buffer_stream make_tensor_buffer_stream
    make_tensor_descriptor make_tensor_descriptor_bytes make_tensor_descriptor_from_native
    make_tensor_descriptor_from_native_bytes make_unaligned_tensor_buffer_stream
    make_unaligned_vector_input_buffer_stream make_unaligned_vector_output_buffer_stream
    make_vector_input_buffer_stream make_vector_output_buffer_stream mask max max_cmp max_reduce
    max_shift maxdiff mdspan min min_cmp min_reduce min_shift mmac_fn mmul mmul_fn msc msc_square
    mul mul_reduce mul_square native_vector_length_v neg negmul neq not_equal oor_policy op_abs
    op_add op_conj op_max op_min op_neg op_none op_or_none op_result_helper op_result_type_t
    op_sign op_sub op_transpose op_value_type_helper op_value_type_t op_zero operand_base_type
    operand_base_type_t operators pack pack_sign parallel_lookup partial_sliding_mul
    pattern_iterator peel_back peel_front peel_idx peeled_loop peeled_pipelined_loop pipelined_loop
    pipelined_loops print print_fixed print_matrix random_circular_iterator real reduce_add
    reduce_add_v reduce_max reduce_min reduce_mul restrict_mdspan restrict_span restrict_span_1d
    restrict_span_2d restrict_span_3d restrict_span_4d restrict_tiled_mdspan restrict_tiled_span
    restrict_tiled_span_1d restrict_tiled_span_2d restrict_tiled_span_3d restrict_tiled_span_4d
    restrict_vector_iterator result_type_helper result_type_t reverse rounding_mode saturating_add
    saturating_sub saturation_mode scoped_mode select set_rounding set_saturation shuffle_down
    shuffle_down_fill shuffle_down_replicate shuffle_down_rotate shuffle_up shuffle_up_fill
    shuffle_up_replicate shuffle_up_rotate sin sincos sincos_complex size sliding_mac
    sliding_mac_antisym sliding_mac_antisym_uct sliding_mac_ch sliding_mac_sym sliding_mac_sym_uct
    sliding_mul sliding_mul_antisym sliding_mul_antisym_uct sliding_mul_ch sliding_mul_ch_ops
    sliding_mul_ch_x_ops sliding_mul_ch_xy_ops sliding_mul_ch_y_ops sliding_mul_ops sliding_mul_sym
    sliding_mul_sym_ops sliding_mul_sym_uct sliding_mul_sym_uct_ops sliding_mul_sym_x_ops
    sliding_mul_sym_xy_ops sliding_mul_sym_y_ops sliding_mul_x_ops sliding_mul_xy_ops
    sliding_mul_y_ops sliding_window_dim_1d sliding_window_dim_2d sliding_window_dim_3d span
    span_1d span_2d span_3d span_4d sparse_vector sparse_vector_input_buffer_stream sqrt
    store_floor_bytes_v store_floor_v store_unaligned_v store_v sub swap_rounding swap_saturation
    tanh tbs_mode tensor_descriptor tensor_dim tile tile_id tiled_mdspan tiled_span tiled_span_1d
    tiled_span_2d tiled_span_3d tiled_span_4d to_fixed to_fixed_floor to_fixed_sign to_float
    to_vector transpose unaligned_vector_input_buffer_stream unaligned_vector_iterator
    unaligned_vector_output_buffer_stream unaligned_vector_ref unary_op unary_op_common
    unary_op_common_const unary_op_common_ref unpack unpack_sign unroll_for unroll_for_2d
    unroll_times unroll_times_2d upshift value vector vector_cast vector_circular_iterator
    vector_decl_align vector_elem_const_ref vector_elem_ref vector_input_buffer_stream
    vector_iterator vector_ldst_align_elems_v vector_ldst_align_v vector_output_buffer_stream
    vector_random_circular_iterator vector_ref zero zeros
""".split())
"""The AIE API's names in namespace ``aie`` (see the module's docstring), 410 of them."""
