"""Operator lists of mxc.contrib.amp for bfloat16 (MXNet 1.9.1's categories, by
registered operator name; names mxc does not register are ignored at use)."""


# run in bfloat16: their inputs are cast to bfloat16
BF16_FUNCS = [
    'Convolution', 'FullyConnected', '_npx_convolution',
]


# safe in bfloat16 and in float32: they run in the dtype they get
BF16_FP32_FUNCS = [
    'BatchNorm', 'BatchNormWithReLU', 'Concat', 'LRN', 'Pooling', '_add', '_npx_batch_norm',
    '_npx_pooling', '_shuffle', 'abs', 'amp_cast', 'amp_multicast', 'clip', 'concat', 'relu',
    'shuffle', 'sqrt', 'square', 'tanh',
]


# inputs of these operators that stay float32 when the data is bfloat16 ("" is the data)
BF16_USE_FP32_PARAMS = {
    'BatchNorm': ['', 'gamma', 'beta', 'moving_mean', 'moving_var'],
    'BatchNormWithReLU': ['', 'gamma', 'beta', 'moving_mean', 'moving_var'],
}


# must run in float32: their inputs are cast to float32
FP32_FUNCS = [
    'BatchNorm_v1', 'BilinearSampler', 'BlockGrad', 'CTCLoss', 'Cast', 'Convolution_v1', 'Crop',
    'Custom', 'Deconvolution', 'Dropout', 'Embedding', 'Flatten', 'GridGenerator', 'GroupNorm',
    'IdentityAttachKLSparseReg', 'InstanceNorm', 'L2Normalization', 'LayerNorm',
    'LinearRegressionOutput', 'LogisticRegressionOutput', 'MAERegressionOutput', 'MakeLoss',
    'Pad', 'Pooling_v1', 'RNN', 'ROIPooling', 'Reshape', 'SVMOutput', 'SequenceLast',
    'SequenceMask', 'SequenceReverse', 'SliceChannel', 'Softmax', 'SoftmaxActivation',
    'SoftmaxOutput', 'SpatialTransformer', 'SwapAxis', 'UpSampling', '_CachedOp',
    '_CrossDeviceCopy', '_CustomFunction', '_DivScalar', '_EqualScalar', '_GreaterEqualScalar',
    '_GreaterScalar', '_Hypot', '_HypotScalar', '_LesserEqualScalar', '_LesserScalar',
    '_LogicalAndScalar', '_LogicalOrScalar', '_LogicalXorScalar', '_MaximumScalar',
    '_MinimumScalar', '_MinusScalar', '_ModScalar', '_MulScalar', '_NDArray', '_Native',
    '_NoGradient', '_NotEqualScalar', '_PlusScalar', '_Power', '_PowerScalar', '_RDivScalar',
    '_RMinusScalar', '_RModScalar', '_RPowerScalar', '_adamw_update', '_arange',
    '_broadcast_backward', '_cond', '_contrib_AdaptiveAvgPooling2D',
    '_contrib_BilinearResize2D', '_contrib_CTCLoss', '_contrib_DeformableConvolution',
    '_contrib_DeformablePSROIPooling', '_contrib_SparseEmbedding', '_contrib_SyncBatchNorm',
    '_contrib_bipartite_matching', '_contrib_boolean_mask', '_contrib_count_sketch',
    '_contrib_ctc_loss', '_contrib_dequantize', '_contrib_div_sqrt_dim', '_contrib_fft',
    '_contrib_getnnz', '_contrib_gradientmultiplier', '_contrib_group_adagrad_update',
    '_contrib_hawkesll', '_contrib_ifft', '_contrib_index_array', '_contrib_index_copy',
    '_contrib_multi_lamb_update', '_contrib_quadratic', '_contrib_quantize',
    '_contrib_quantize_v2', '_contrib_quantized_act', '_contrib_quantized_concat',
    '_contrib_quantized_conv', '_contrib_quantized_elemwise_add', '_contrib_quantized_flatten',
    '_contrib_quantized_fully_connected', '_contrib_quantized_pooling', '_contrib_requantize',
    '_copy', '_copyto', '_crop_assign', '_crop_assign_scalar', '_cvcopyMakeBorder',
    '_cvimdecode', '_cvimread', '_cvimresize', '_div_scalar', '_equal_scalar', '_eye',
    '_foreach', '_full', '_grad_add', '_greater_equal_scalar', '_greater_scalar', '_histogram',
    '_hypot', '_hypot_scalar', '_identity_with_attr_like_rhs', '_image_adjust_lighting',
    '_image_crop', '_image_flip_left_right', '_image_flip_top_bottom', '_image_normalize',
    '_image_random_brightness', '_image_random_color_jitter', '_image_random_contrast',
    '_image_random_flip_left_right', '_image_random_flip_top_bottom', '_image_random_hue',
    '_image_random_lighting', '_image_random_saturation', '_image_resize', '_image_to_tensor',
    '_imdecode', '_lesser_equal_scalar', '_lesser_scalar', '_linalg_det', '_linalg_extractdiag',
    '_linalg_extracttrian', '_linalg_gelqf', '_linalg_gemm', '_linalg_gemm2', '_linalg_inverse',
    '_linalg_makediag', '_linalg_maketrian', '_linalg_potrf', '_linalg_potri',
    '_linalg_slogdet', '_linalg_sumlogdiag', '_linalg_syevd', '_linalg_syrk', '_linalg_trmm',
    '_linalg_trsm', '_linspace', '_logical_and_scalar', '_logical_or_scalar',
    '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar', '_minus_scalar', '_mod_scalar',
    '_mp_adamw_update', '_mul_scalar', '_multi_adamw_update', '_multi_lamb_update',
    '_multi_mp_adamw_update', '_multi_mp_lamb_update', '_not_equal_scalar', '_npi_boolean_mask',
    '_npi_det', '_npi_histogram', '_npi_inv', '_npi_random_randint', '_npi_shuffle',
    '_npi_slogdet', '_npi_split', '_npx__image_adjust_lighting', '_npx__image_crop',
    '_npx__image_flip_left_right', '_npx__image_flip_top_bottom', '_npx__image_normalize',
    '_npx__image_random_brightness', '_npx__image_random_color_jitter',
    '_npx__image_random_contrast', '_npx__image_random_flip_left_right',
    '_npx__image_random_flip_top_bottom', '_npx__image_random_hue',
    '_npx__image_random_lighting', '_npx__image_random_saturation', '_npx__image_resize',
    '_npx__image_to_tensor', '_npx_deconvolution', '_npx_layer_norm', '_npx_rnn',
    '_onehot_encode', '_ones', '_plus_scalar', '_power', '_power_scalar', '_random_exponential',
    '_random_exponential_like', '_random_gamma', '_random_gamma_like',
    '_random_generalized_negative_binomial', '_random_generalized_negative_binomial_like',
    '_random_negative_binomial', '_random_negative_binomial_like', '_random_normal',
    '_random_normal_like', '_random_poisson', '_random_poisson_like', '_random_randint',
    '_random_uniform', '_random_uniform_like', '_ravel_multi_index', '_rdiv_scalar',
    '_rminus_scalar', '_rmod_scalar', '_rnn_param_concat', '_rpower_scalar',
    '_sample_exponential', '_sample_gamma', '_sample_generalized_negative_binomial',
    '_sample_multinomial', '_sample_negative_binomial', '_sample_normal', '_sample_poisson',
    '_sample_uniform', '_sample_unique_zipfian', '_scatter_minus_scalar',
    '_scatter_plus_scalar', '_scatter_set_nd', '_scatter_set_rows', '_set_value',
    '_sg_mkldnn_conv', '_sg_mkldnn_fully_connected', '_slice_assign', '_slice_assign_scalar',
    '_sparse_Embedding', '_sparse_FullyConnected', '_sparse_LinearRegressionOutput',
    '_sparse_LogisticRegressionOutput', '_sparse_MAERegressionOutput', '_sparse_abs',
    '_sparse_adagrad_update', '_sparse_adam_update', '_sparse_arccos', '_sparse_arccosh',
    '_sparse_arcsin', '_sparse_arcsinh', '_sparse_arctan', '_sparse_arctanh',
    '_sparse_cast_storage', '_sparse_cbrt', '_sparse_ceil', '_sparse_clip', '_sparse_concat',
    '_sparse_cos', '_sparse_cosh', '_sparse_degrees', '_sparse_exp', '_sparse_expm1',
    '_sparse_fix', '_sparse_floor', '_sparse_ftrl_update', '_sparse_gamma', '_sparse_gammaln',
    '_sparse_log', '_sparse_log10', '_sparse_log1p', '_sparse_log2', '_sparse_make_loss',
    '_sparse_mean', '_sparse_negative', '_sparse_norm', '_sparse_radians', '_sparse_relu',
    '_sparse_retain', '_sparse_rint', '_sparse_round', '_sparse_rsqrt',
    '_sparse_sgd_mom_update', '_sparse_sgd_update', '_sparse_sigmoid', '_sparse_sign',
    '_sparse_sin', '_sparse_sinh', '_sparse_slice', '_sparse_sqrt', '_sparse_square',
    '_sparse_stop_gradient', '_sparse_tan', '_sparse_tanh', '_sparse_trunc',
    '_sparse_zeros_like', '_split_v2', '_split_v2_backward', '_square_sum', '_take_along_axis',
    '_unravel_index', '_while_loop', '_zeros', '_zeros_without_dtype', 'adam_update',
    'all_finite', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
    'argmax_channel', 'argmin', 'argsort', 'batch_take', 'broadcast_axes', 'broadcast_axis',
    'broadcast_hypot', 'broadcast_like', 'broadcast_mul', 'broadcast_power', 'broadcast_to',
    'cast', 'cast_storage', 'cbrt', 'ceil', 'choose_element_0index', 'cos', 'cosh', 'crop',
    'ctc_loss', 'degrees', 'depth_to_space', 'diag', 'erf', 'erfinv', 'exp', 'expand_dims',
    'expm1', 'fill_element_0index', 'fix', 'flatten', 'flip', 'floor', 'ftml_update',
    'ftrl_update', 'gamma', 'gammaln', 'gather_nd', 'hard_sigmoid', 'identity', 'khatri_rao',
    'lamb_update_phase1', 'lamb_update_phase2', 'linalg_det', 'linalg_extractdiag',
    'linalg_extracttrian', 'linalg_gelqf', 'linalg_gemm', 'linalg_gemm2', 'linalg_inverse',
    'linalg_makediag', 'linalg_maketrian', 'linalg_potrf', 'linalg_potri', 'linalg_slogdet',
    'linalg_sumlogdiag', 'linalg_syrk', 'linalg_trmm', 'linalg_trsm', 'log', 'log10', 'log1p',
    'log2', 'log_softmax', 'logical_not', 'make_loss', 'max', 'max_axis', 'mean', 'min',
    'min_axis', 'moments', 'mp_lamb_update_phase1', 'mp_lamb_update_phase2',
    'mp_nag_mom_update', 'mp_sgd_mom_update', 'mp_sgd_update', 'multi_all_finite', 'multi_lars',
    'multi_mp_sgd_mom_update', 'multi_mp_sgd_update', 'multi_sgd_mom_update',
    'multi_sgd_update', 'multi_sum_sq', 'nag_mom_update', 'nanprod', 'nansum', 'negative',
    'norm', 'normal', 'one_hot', 'ones_like', 'pad', 'pick',
    'preloaded_multi_mp_sgd_mom_update', 'preloaded_multi_mp_sgd_update',
    'preloaded_multi_sgd_mom_update', 'preloaded_multi_sgd_update', 'prod', 'radians',
    'random_exponential', 'random_gamma', 'random_generalized_negative_binomial',
    'random_negative_binomial', 'random_normal', 'random_poisson', 'random_randint',
    'random_uniform', 'ravel_multi_index', 'rcbrt', 'reciprocal', 'repeat', 'reset_arrays',
    'reshape', 'reshape_like', 'reverse', 'rint', 'rmsprop_update', 'rmspropalex_update',
    'round', 'rsqrt', 'sample_exponential', 'sample_gamma',
    'sample_generalized_negative_binomial', 'sample_multinomial', 'sample_negative_binomial',
    'sample_normal', 'sample_poisson', 'sample_uniform', 'scatter_nd', 'sgd_mom_update',
    'sgd_update', 'shape_array', 'sigmoid', 'sign', 'signsgd_update', 'signum_update', 'sin',
    'sinh', 'size_array', 'slice', 'slice_axis', 'slice_like', 'smooth_l1', 'softmax',
    'softmax_cross_entropy', 'softmin', 'softsign', 'sort', 'space_to_depth', 'sparse_retain',
    'split', 'split_v2', 'squeeze', 'stop_gradient', 'sum', 'sum_axis', 'swapaxes', 'take',
    'tan', 'tile', 'topk', 'transpose', 'trunc', 'uniform', 'unravel_index', 'zeros_like',
]


# run in float32 only for these parameter values: (operator, parameter, values)
CONDITIONAL_FP32_FUNCS = [
    ('Activation', 'act_type', ['softrelu']),
    ('LeakyReLU', 'act_type', ['elu', 'selu']),
]


# several inputs that must share a dtype: cast to the widest of them
WIDEST_TYPE_CASTS = [
    'Correlation', 'ElementWiseSum', '_Div', '_Equal', '_Greater', '_Greater_Equal', '_Lesser',
    '_Lesser_Equal', '_Logical_And', '_Logical_Or', '_Logical_Xor', '_Maximum', '_Minimum',
    '_Minus', '_Mod', '_Mul', '_Not_Equal', '_Plus', '_contrib_MultiBoxDetection',
    '_contrib_MultiBoxPrior', '_contrib_MultiBoxTarget', '_contrib_MultiProposal',
    '_contrib_PSROIPooling', '_contrib_Proposal', '_contrib_ROIAlign', '_contrib_box_iou',
    '_contrib_box_nms', '_contrib_box_non_maximum_suppression', '_contrib_dgl_adjacency',
    '_contrib_dgl_csr_neighbor_non_uniform_sample', '_contrib_dgl_csr_neighbor_uniform_sample',
    '_contrib_dgl_graph_compact', '_contrib_dgl_subgraph', '_contrib_edge_id', '_div', '_equal',
    '_greater', '_greater_equal', '_lesser', '_lesser_equal', '_logical_and', '_logical_or',
    '_logical_xor', '_maximum', '_minimum', '_minus', '_mod', '_mul', '_not_equal', '_plus',
    '_random_pdf_dirichlet', '_random_pdf_exponential', '_random_pdf_gamma',
    '_random_pdf_generalized_negative_binomial', '_random_pdf_negative_binomial',
    '_random_pdf_normal', '_random_pdf_poisson', '_random_pdf_uniform', '_scatter_elemwise_div',
    '_sparse_ElementWiseSum', '_sparse_add_n', '_sparse_broadcast_add', '_sparse_broadcast_div',
    '_sparse_broadcast_minus', '_sparse_broadcast_mul', '_sparse_broadcast_plus',
    '_sparse_broadcast_sub', '_sparse_dot', '_sparse_elemwise_add', '_sparse_elemwise_div',
    '_sparse_elemwise_mul', '_sparse_elemwise_sub', '_sparse_sum', '_sparse_where', '_sub',
    'add_n', 'batch_dot', 'broadcast_add', 'broadcast_div', 'broadcast_equal',
    'broadcast_greater', 'broadcast_greater_equal', 'broadcast_lesser',
    'broadcast_lesser_equal', 'broadcast_logical_and', 'broadcast_logical_or',
    'broadcast_logical_xor', 'broadcast_maximum', 'broadcast_minimum', 'broadcast_minus',
    'broadcast_mod', 'broadcast_not_equal', 'broadcast_plus', 'broadcast_sub', 'dot',
    'elemwise_add', 'elemwise_div', 'elemwise_mul', 'elemwise_sub', 'random_pdf_dirichlet',
    'random_pdf_exponential', 'random_pdf_gamma', 'random_pdf_generalized_negative_binomial',
    'random_pdf_negative_binomial', 'random_pdf_normal', 'random_pdf_poisson',
    'random_pdf_uniform', 'stack', 'where',
]


# loss layers whose grad_scale carries the dynamic loss scale (mx.nd only)
LOSS_OUTPUT_FUNCTIONS = [
    'SoftmaxOutput', 'LinearRegressionOutput', 'LogisticRegressionOutput', 'MAERegressionOutput',
]
