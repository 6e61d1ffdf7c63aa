// The flows as the state holds them, at B_FLOW_*, read through common/flows_in.glsl's FLOW_*_IN and
// stored_faces() (the including shader includes common/model.glsl first).
#define FLOWS_IN_X B_FLOW_X
#define FLOWS_IN_Y B_FLOW_Y
#define FLOWS_IN_Z B_FLOW_Z
#include "common/flows_in.glsl"
