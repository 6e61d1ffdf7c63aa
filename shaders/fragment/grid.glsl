// The fragment backend's passes: each writes the texel of gl_FragCoord, reading the water state's
// textures with texelFetch, texel (x, y) of cell (x, y) (faces: fragment/lattice.glsl).
uniform ivec2 u_size;               // cells (nx, ny)

ivec2 texel() { return ivec2(gl_FragCoord.xy); }

bool inside(ivec2 c) { return all(greaterThanEqual(c, ivec2(0))) && all(lessThan(c, u_size)); }

// a cell's value; outside the grid the nearest cell's (callers that pass it on ignore it there)
float cell_at(sampler2D tex, ivec2 c) { return texelFetch(tex, clamp(c, ivec2(0), u_size - 1), 0).r; }

float face_at(sampler2D tex, ivec2 f) { return texelFetch(tex, f, 0).r; }
