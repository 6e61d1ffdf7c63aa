#version 410
// The awake tiles of the sleeping tiles (hydro/water_fragment.py) as rectangles, instance i the one whose
// first tile is tile i (row-major; sleep_rects.frag), drawn as a triangle strip of 4 vertices: texels
// [first, far) * u_tile of the render target, the last row and column of tiles reaching to its far edges.
// A tile that starts no rectangle is moved outside the target, so only the awake tiles' texels run the
// pass's fragment shader; with u_unchecked, where every tile is awake, every tile is (sleep_plan.frag).
uniform sampler2D u_rects;          // a texel a tile: its rectangle's far corner in tiles, or (0, 0)
uniform ivec2 u_tiles;              // tiles (x, y)
uniform int u_tile;                 // texels of the target a side of a tile (its cells, or its blocks)
uniform ivec2 u_target;             // texels of the render target
uniform bool u_unchecked;

void main() {
    ivec2 t = ivec2(gl_InstanceID % u_tiles.x, gl_InstanceID / u_tiles.x);
    ivec2 far = ivec2(texelFetch(u_rects, t, 0).rg);
    if (far.x == 0 || u_unchecked && ivec2(texelFetch(u_rects, ivec2(0), 0).rg) == u_tiles) {
        gl_Position = vec4(2.0, 2.0, 0.0, 1.0);
        return;
    }
    ivec2 corner = ivec2((gl_VertexID & 1) != 0 ? far.x : t.x, (gl_VertexID & 2) != 0 ? far.y : t.y);
    ivec2 p = corner * u_tile;
    p.x = corner.x == u_tiles.x ? u_target.x : p.x;
    p.y = corner.y == u_tiles.y ? u_target.y : p.y;
    gl_Position = vec4(vec2(p) / vec2(u_target) * 2.0 - 1.0, 0.0, 1.0);
}
