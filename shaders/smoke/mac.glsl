// Staggered (MAC) smoke grid shared by the smoke passes (hydro/reference/smoke.py spells out the same):
//   vx image (nx+1, ny): x-velocity on vertical faces; face (i, j) at grid point (i - 1/2, j)
//   vy image (nx, ny+1): y-velocity on horizontal faces; face (i, j) at grid point (i, j - 1/2)
//   scalars rgba (nx, ny): density, temperature, fuel at cell centres (i, j); y points up.
// Sides are (left, right, bottom, top); a wall's tangential velocity is v on left/right, u on bottom/top.
#include "common/grid.glsl"
#include "common/bindings.glsl"

#define BC_FREE_SLIP 0
#define BC_NO_SLIP 1
#define BC_OPEN 2
#define FACE_FLUID 0
#define FACE_FIXED 1
#define FACE_OPEN 2

uniform ivec4 u_bc_kind;        // BC_* per side
uniform vec4 u_bc_tangent;      // sliding-wall velocity per side (no-slip walls; a lid)

layout(binding = B_SMOKE_SOLID) uniform sampler2D u_solid;    // 1 in obstacle cells

bool solid(ivec2 c) { return texelFetch(u_solid, c, 0).r > 0.5; }

// Walls and obstacle faces hold velocity 0; open sides' faces are free (pressure 0 outside).
int face_type_x(ivec2 f) {
    if (f.x == 0 || f.x == u_size.x) {
        int side = f.x == 0 ? 0 : 1;
        ivec2 c = ivec2(f.x == 0 ? 0 : u_size.x - 1, f.y);
        return (u_bc_kind[side] == BC_OPEN && !solid(c)) ? FACE_OPEN : FACE_FIXED;
    }
    return (solid(f - ivec2(1, 0)) || solid(f)) ? FACE_FIXED : FACE_FLUID;
}

int face_type_y(ivec2 f) {
    if (f.y == 0 || f.y == u_size.y) {
        int side = f.y == 0 ? 2 : 3;
        ivec2 c = ivec2(f.x, f.y == 0 ? 0 : u_size.y - 1);
        return (u_bc_kind[side] == BC_OPEN && !solid(c)) ? FACE_OPEN : FACE_FIXED;
    }
    return (solid(f - ivec2(0, 1)) || solid(f)) ? FACE_FIXED : FACE_FLUID;
}

// Bilinear sample at array coordinates g of a one-component image of `dims` texels, clamped to the
// array; lo / hi get the min / max of the four nodes (the MacCormack limiter's bounds). The four nodes
// come from one textureGather, not four texelFetch calls: GL's memory limit is per access
// (docs/benchmarks-log.md), and the back-trace samples the velocity 4 times per face. The gather point
// (i0 + 1) / dims lies midway between the four texel centres, so rounding cannot pick other texels.
float bilinear(sampler2D t, ivec2 dims, vec2 g, out float lo, out float hi) {
    g = clamp(g, vec2(0.0), vec2(dims - 1));
    ivec2 i0 = min(ivec2(floor(g)), dims - 2);
    vec2 f = g - vec2(i0);
    vec4 q = textureGather(t, (vec2(i0) + 1.0) / vec2(dims));  // (i0, j0+1), (i0+1, j0+1), (i0+1, j0), (i0, j0)
    lo = min(min(q.w, q.z), min(q.x, q.y));
    hi = max(max(q.w, q.z), max(q.x, q.y));
    return mix(mix(q.w, q.z, f.x), mix(q.x, q.y, f.x), f.y);
}

float bilinear(sampler2D t, ivec2 dims, vec2 g) { float lo, hi; return bilinear(t, dims, g, lo, hi); }

// Bilinear sample of a cell-centred field (u_size texels) at grid point g over fluid nodes only: a
// solid node's weight is zeroed and the rest renormalised, so what solid cells store never leaks into
// the gas. lo / hi: min / max over the fluid nodes among the four. No fluid node (or none with weight):
// `own` (the value of the cell being updated). Mirrors hydro.reference.smoke.bilinear_fluid.
vec4 bilinear_fluid(sampler2D t, vec2 g, vec4 own, out vec4 lo, out vec4 hi) {
    g = clamp(g, vec2(0.0), vec2(u_size - 1));
    ivec2 i0 = min(ivec2(floor(g)), u_size - 2);
    vec2 f = g - vec2(i0);
    vec4 flags = textureGather(u_solid, (vec2(i0) + 1.0) / vec2(u_size));   // as in bilinear()
    float solid_at[4] = float[4](flags.w, flags.z, flags.x, flags.y);        // in the order of k below
    vec4 total = vec4(0.0);
    float weight = 0.0;
    bool found = false;
    lo = own;
    hi = own;
    for (int k = 0; k < 4; ++k) {
        ivec2 o = ivec2(k & 1, k >> 1);
        if (solid_at[k] > 0.5) continue;
        vec4 a = texelFetch(t, i0 + o, 0);
        float w = (o.x == 1 ? f.x : 1.0 - f.x) * (o.y == 1 ? f.y : 1.0 - f.y);
        total += w * a;
        weight += w;
        lo = found ? min(lo, a) : a;
        hi = found ? max(hi, a) : a;
        found = true;
    }
    return weight > 0.0 ? total / weight : own;
}

vec4 bilinear_fluid(sampler2D t, vec2 g, vec4 own) { vec4 lo, hi; return bilinear_fluid(t, g, own, lo, hi); }

// What a solid cell stores: no density or fuel, the ambient temperature (so a cell that an obstacle
// leaves again holds gas at rest with the surroundings).
vec4 solid_scalars(float ambient) { return vec4(0.0, ambient, 0.0, 0.0); }

ivec2 dims_x() { return u_size + ivec2(1, 0); }
ivec2 dims_y() { return u_size + ivec2(0, 1); }
