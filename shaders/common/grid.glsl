// 2D dispatch over a grid of cells: one invocation per cell or face, bounds-checked by the caller.
#define LOCAL_SIZE 16
layout(local_size_x = LOCAL_SIZE, local_size_y = LOCAL_SIZE) in;

#include "common/cells.glsl"
