// The flows as the state holds them, at B_FLOW_* (with BUFFER_VIEWS through their views at
// B_FLOW_*_VIEW), read through common/flows_in.glsl's FLOW_*_IN and stored_faces(): for the cell-wise
// kernel's first passes, the flows of the substep before (the including shader includes
// common/model.glsl first).
#define FLOWS_IN_X B_FLOW_X
#define FLOWS_IN_Y B_FLOW_Y
#define FLOWS_IN_Z B_FLOW_Z
#define FLOWS_IN_X_VIEW B_FLOW_X_VIEW
#define FLOWS_IN_Y_VIEW B_FLOW_Y_VIEW
#define FLOWS_IN_Z_VIEW B_FLOW_Z_VIEW
#include "common/flows_in.glsl"
