// The flows a cell-wise pass reads, as FLOW_X_IN(i), FLOW_Y_IN(i) (and FLOW_Z_IN(i) on the hex lattice):
// storage buffers at bindings FLOWS_IN_X, FLOWS_IN_Y, FLOWS_IN_Z, or (BUFFER_VIEWS) r32f buffer-texture
// views of the same buffers at FLOWS_IN_X_VIEW..., which CPU rasterisers load faster (hydro/_native.py
// BufferViews). The including shader defines the bindings (the views' only where BUFFER_VIEWS is on),
// and includes common/model.glsl first.
#ifndef BUFFER_VIEWS
#define BUFFER_VIEWS 0
#endif
#if BUFFER_VIEWS
layout(binding = FLOWS_IN_X_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_x_view;
layout(binding = FLOWS_IN_Y_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_y_view;
#define FLOW_X_IN(i) imageLoad(u_flow_x_view, i).r
#define FLOW_Y_IN(i) imageLoad(u_flow_y_view, i).r
#if HEX
layout(binding = FLOWS_IN_Z_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_z_view;
#define FLOW_Z_IN(i) imageLoad(u_flow_z_view, i).r
#endif
#else
layout(std430, binding = FLOWS_IN_X) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = FLOWS_IN_Y) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
#define FLOW_X_IN(i) u_flow_x_in[i]
#define FLOW_Y_IN(i) u_flow_y_in[i]
#if HEX
layout(std430, binding = FLOWS_IN_Z) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
#define FLOW_Z_IN(i) u_flow_z_in[i]
#endif
#endif

// The input faces of cell c, as the flows hold them.
Faces stored_faces(ivec2 c) {
    ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
    Faces f;
    f.left = FLOW_X_IN(index_x(c));
    f.right = FLOW_X_IN(index_x(c + dx));
    f.bottom = FLOW_Y_IN(index_y(c));
    f.top = FLOW_Y_IN(index_y(c + dy));
#if HEX
    f.z_in = FLOW_Z_IN(index_z(c + dx));
    f.z_out = FLOW_Z_IN(index_z(c + dy));
#endif
    return f;
}
