// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @sizes_disagree(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // CHECK: ge.einsum: index 'j' has sizes 3 and 4
  %0 = ge.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @term_per_operand(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: ge.einsum: equation 'ij,jk->ik' has 2 operand terms, 1 operands given
  %0 = ge.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @no_equation(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: ge.einsum: property 'equation' is required
  %0 = ge.einsum %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @mixed_types(%a: tensor<2x3xf32>, %b: tensor<3xf16>) -> tensor<2xf32> {
  // CHECK: ge.einsum: inputs 0 and 1 have element types f32 and f16
  %0 = ge.einsum %a, %b {equation = "ij,j->i"} : (tensor<2x3xf32>, tensor<3xf16>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @det_of_a_rectangle(%a: tensor<2x3xf32>) -> tensor<f32> {
  // CHECK: ge.det: needs square matrices, got 2x3
  %0 = ge.det %a : (tensor<2x3xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @grid_of_the_wrong_rank(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x2xf32>) -> tensor<1x2x3xf32> {
  // CHECK: ge.grid_sample: grid [1, 3, 2] does not fit X [1, 2, 4, 4]: it must be [N, out..., 2]
  %0 = ge.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<1x3x2xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// -----

func.func @grid_sample_mode(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK: ge.grid_sample: mode must be one of linear, nearest, cubic, got 'area'
  %0 = ge.grid_sample %x, %g {mode = "area"} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @dft_last_dim(%x: tensor<2x6x3xf32>) -> tensor<2x6x2xf32> {
  // CHECK: ge.dft: the input must be [..., 1] (real) or [..., 2] (complex), got shape [2, 6, 3]
  %0 = ge.dft %x : (tensor<2x6x3xf32>) -> tensor<2x6x2xf32>
  func.return %0 : tensor<2x6x2xf32>
}

// -----

func.func @dft_axis_is_the_parts(%x: tensor<2x6x2xf32>) -> tensor<2x6x2xf32> {
  %axis = ge.constant dense<2> : tensor<i64>
  // CHECK: ge.dft: axis 2 must name a signal dim of a rank-3 input (not its last)
  %0 = ge.dft %x, axis = %axis : (tensor<2x6x2xf32>, tensor<i64>) -> tensor<2x6x2xf32>
  func.return %0 : tensor<2x6x2xf32>
}
