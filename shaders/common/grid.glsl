// 2D dispatch over a grid of cells: one invocation per cell or face, bounds-checked by the caller.
#define LOCAL_SIZE 16
// a pass may define GROUP_SIDE (before including this file) for a workgroup of another side
#ifndef GROUP_SIDE
#define GROUP_SIDE LOCAL_SIZE
#endif
// or GROUP_X and GROUP_Y for a workgroup of other sides
#ifdef GROUP_X
layout(local_size_x = GROUP_X, local_size_y = GROUP_Y) in;
#else
layout(local_size_x = GROUP_SIDE, local_size_y = GROUP_SIDE) in;
#endif

#include "common/cells.glsl"
