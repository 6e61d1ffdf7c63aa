// Fresh sediment at a cell (Renderer.track_deposits), written once for deposits.comp and deposits.frag.
// x: the bed's height above the reference (the terrain as it was when tracking began) plus the sediment
// the water carries, as the height it would settle to; y: that sediment over the water's depth (how muddy
// the water is), 0 where the water is no deeper than min_depth.
vec2 fresh_deposits(float terrain, float reference, float water, float sediment, float min_depth) {
    float raised = max(terrain - reference, 0.0);
    float muddy = water > min_depth ? sediment / water : 0.0;
    return vec2(raised + sediment, muddy);
}
