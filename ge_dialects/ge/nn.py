"""Neural-network ops: convolution, pooling, normalization, matrix products, softmax."""

NN_OPS: list = []
