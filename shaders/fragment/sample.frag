#version 410
// FragmentWaterGrid.sample_async's pass (hydro/water_fragment.py): common/sample.glsl's sample_point()
// for one point a texel, the points an rg32f texture laid out as the target, the cells and faces read
// from the grid's textures (laid out as the compute grids' images and buffers, fragment/lattice.glsl).
#include "fragment/grid.glsl"

uniform sampler2D u_water, u_terrain;
uniform sampler2D u_flow_x, u_flow_y;
#if HEX
uniform sampler2D u_flow_z;
#endif
uniform sampler2D u_points;             // (x, y) grid coordinates, texel for texel as the target

layout(location = 0) out vec4 o_value;  // depth, surface, vx, vy

// no storage buffers or images on GL 4.1: velocity.glsl and sample.glsl read the textures
#define FLOWS_DECLARED 1
#define FLOW_X(f) face_at(u_flow_x, f)
#define FLOW_Y(f) face_at(u_flow_y, f)
#define FLOW_Z(f) face_at(u_flow_z, f)
#include "common/velocity.glsl"
float terrain_at(ivec2 c) { return texelFetch(u_terrain, c, 0).r; }
#define WATER_AT(c) texelFetch(u_water, c, 0).r
#define SAMPLE_POINT(i) texelFetch(u_points, texel(), 0).xy
#define SAMPLE_VALUE(i) o_value
#include "common/sample.glsl"

void main() {
    sample_point(0);                    // the point of this texel (SAMPLE_POINT)
}
