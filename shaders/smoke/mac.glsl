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

// Bilinear sample at array coordinates g of an image of `dims` texels, clamped to the array;
// lo / hi get the min / max of the four nodes (the MacCormack limiter's bounds).
vec4 bilinear(sampler2D t, ivec2 dims, vec2 g, out vec4 lo, out vec4 hi) {
    g = clamp(g, vec2(0.0), vec2(dims - 1));
    ivec2 i0 = min(ivec2(floor(g)), dims - 2);
    vec2 f = g - vec2(i0);
    vec4 a = texelFetch(t, i0, 0), b = texelFetch(t, i0 + ivec2(1, 0), 0);
    vec4 c = texelFetch(t, i0 + ivec2(0, 1), 0), d = texelFetch(t, i0 + ivec2(1, 1), 0);
    lo = min(min(a, b), min(c, d));
    hi = max(max(a, b), max(c, d));
    return mix(mix(a, b, f.x), mix(c, d, f.x), f.y);
}

vec4 bilinear(sampler2D t, ivec2 dims, vec2 g) { vec4 lo, hi; return bilinear(t, dims, g, lo, hi); }

// Bilinear sample of a cell-centred field (u_size texels) at grid point g over fluid nodes only: a
// solid node's weight is zeroed and the rest renormalised, so what solid cells store never leaks into
// the gas. lo / hi: min / max over the fluid nodes among the four. No fluid node (or none with weight):
// `own` (the value of the cell being updated). Mirrors hydro.reference.smoke.bilinear_fluid.
vec4 bilinear_fluid(sampler2D t, vec2 g, vec4 own, out vec4 lo, out vec4 hi) {
    g = clamp(g, vec2(0.0), vec2(u_size - 1));
    ivec2 i0 = min(ivec2(floor(g)), u_size - 2);
    vec2 f = g - vec2(i0);
    vec4 total = vec4(0.0);
    float weight = 0.0;
    bool found = false;
    lo = own;
    hi = own;
    for (int k = 0; k < 4; ++k) {
        ivec2 o = ivec2(k & 1, k >> 1);
        if (solid(i0 + o)) continue;
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
