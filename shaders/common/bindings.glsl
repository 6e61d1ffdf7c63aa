// Binding points, defined once: hydro/_gl.py reads the B_* names from this file.
// hydro binds these during its own calls only; a game keeps the other units for itself.

// images (r32f)
#define B_TERRAIN 0
#define B_WATER 1
#define B_OUT_IMAGE 2
#define B_OUTFLOW_SCALE 3    // the cell-wise kernel: K per cell
// images (rgba32f)
#define B_PACKED_IN 4        // the blocked kernel's state (water/pack.comp)
#define B_PACKED_OUT 5
#define B_CYCLE_RECORD_OUT 6    // the water cycle's records a dispatch writes (common/cycle.glsl)
#define B_CYCLE_RECORD_IMAGE 7  // the records the stats pass reads and clears (water/stats.comp)
// image units (r32f buffer-texture views of the flow buffers): the cell-wise kernel's reads (BUFFER_VIEWS),
// of the buffers at B_FLOW_* (cells_accelerate.comp) and at B_FLOW_*_TMP (cells_move.comp)
#define B_FLOW_X_VIEW 8
#define B_FLOW_Y_VIEW 9
#define B_FLOW_Z_VIEW 10
#define B_FLOW_X_TMP_VIEW 11
#define B_FLOW_Y_TMP_VIEW 12
#define B_FLOW_Z_TMP_VIEW 13
#define B_VELOCITY_X_VIEW 17    // the cell-wise kernel with inertia: views of the B_VELOCITY_* buffers
#define B_VELOCITY_Y_VIEW 18
#define B_VELOCITY_Z_VIEW 19

// shader storage buffers
#define B_FLOW_X 0
#define B_FLOW_Y 1
#define B_FLOW_Z 2
#define B_FLOW_X_TMP 3
#define B_FLOW_Y_TMP 4
#define B_FLOW_Z_TMP 5
#define B_BOUNDARY 6
#define B_LEDGER 7
#define B_PARTIALS 8
#define B_STATS 9
#define B_VELOCITY_X 10      // the cell-wise kernel with inertia: each face's velocity (cells_velocity.comp)
#define B_VELOCITY_Y 11
#define B_BOUNDARY_FACES 12  // the cell-wise kernel: the face of each boundary table entry
#define B_BRUSH 13           // a brush's weights (common/brush.glsl)
#define B_BOOKED 14          // the blocked kernel's boundary flows of a launch (common/booked.glsl)
#define B_SAMPLE_POINTS 15   // a grid's sample points and their values (water/sample.comp)
#define B_SAMPLE_VALUES 16
#define B_GAUGE_FACES 17     // a grid's gauges: their faces, and what crossed them (water/gauge.comp)
#define B_GAUGE_VOLUMES 18
#define B_VELOCITY_Z 26
// texture units: the water cycle's rates, and its records a dispatch reads (rgba32f: what it took from
// each cell and owes it), fetched with texelFetch (common/cycle.glsl)
#define B_RAIN_FIELD 0
#define B_SOURCES 1
#define B_CYCLE_RECORD 5
// erosion (water/erode*.comp, water/slump.comp), which runs between the cell-wise kernel's substeps:
// texture units for what a pass reads of its neighbours, image units the cell-wise kernel leaves free
#define B_CONCENTRATION 2       // texture unit: each cell's sediment concentration (erode_mix.comp)
#define B_BEDROCK 3             // texture unit
#define B_ERODED 4              // texture unit: the bed after erode.comp, before slumping
#define B_SEDIMENT 4            // image unit (the blocked kernel's B_PACKED_IN)
#define B_TERRAIN_OWED 5        // image unit (B_PACKED_OUT): what rounding owes each bed
#define B_SEDIMENT_LEDGER 19    // storage: the sediment that crossed each boundary face into the grid
// the blocked kernel's erosion state (water/pack_erosion.comp, blocked_tile.comp's EROSION): the one a
// launch reads and the one it writes, on image units its launches leave free
#define B_EROSION_IN 2
#define B_EROSION_OUT 3
#define B_EROSION_WATER 3       // pack_erosion.comp's square unpack: the water's last state (its beds)
// image units for the same neighbour reads on CPU rasterisers (NEIGHBOUR_IMAGES), where imageLoad runs
// faster than texelFetch; GPUs keep the texture units (some have only 8 image units)
#define B_CONCENTRATION_IMAGE 14
#define B_BEDROCK_IMAGE 15
#define B_ERODED_IMAGE 16
// sleeping tiles (hydro/water_sleep.py): the tiles a substep computes, each tile's flag that its water or
// flows changed (the substep's, and the next one's, cleared by the plan), the dispatch arguments and totals,
// the tiles kept awake
#define B_SLEEP_LIST 20
#define B_SLEEP_ACTIVE 21
#define B_SLEEP_CLEAR 22
#define B_SLEEP_ARGS 23
#define B_SLEEP_OPEN 24      // the tiles beside a side that is not a wall
#define B_SLEEP_TOUCHED 25   // the blocked kernel: the tiles a call listed, which its unpack writes back
// the renderer's deposits pass (render/deposits.comp): the terrain as it was when tracking began
#define B_DEPOSIT_REFERENCE 5   // image unit (B_PACKED_OUT)

// smoke (hydro/smoke.py) ------------------------------------------------------------------------
// texture units: read-only inputs, fetched with texelFetch
#define B_SMOKE_VX 0
#define B_SMOKE_VY 1
#define B_SMOKE_S 2
#define B_SMOKE_VX_HAT 3
#define B_SMOKE_VY_HAT 4
#define B_SMOKE_S_HAT 5
#define B_SMOKE_VX_BACK 6
#define B_SMOKE_VY_BACK 7
#define B_SMOKE_S_BACK 8         // diffuse_density.comp: the iterate before the last
#define B_SMOKE_SOLID 9
#define B_SMOKE_Q_BEFORE 10      // subtract_gradient.comp: q before a deferred solve's later cycles
#define B_SMOKE_COEF 11
#define B_SMOKE_RHS 12
#define B_SMOKE_Q 13
#define B_SMOKE_COARSE_Q 14
#define B_SMOKE_COARSE_COEF 15
// image units: outputs (and the in-place red-black Gauss-Seidel iterates)
#define B_SMOKE_VX_OUT 0
#define B_SMOKE_VY_OUT 1
#define B_SMOKE_S_OUT 2
#define B_SMOKE_Q_OUT 3
#define B_SMOKE_RHS_OUT 4
#define B_SMOKE_CENTRE_OUT 5
#define B_SMOKE_IMPULSE_X 6       // splats' velocity impulses, held until the next step adds them
#define B_SMOKE_IMPULSE_Y 7
#define B_SMOKE_SHADE_OUT 0       // hydro.smoke_render: the gas's colour at each cell (its own pass)
// shader storage buffers
#define B_SMOKE_PARTIALS 10
#define B_SMOKE_NORMS 11
#define B_SMOKE_WARM 12
#define B_SMOKE_SUM_PARTIALS 15   // the scalars' sums, one record per group (smoke/sums.glsl)
#define B_SMOKE_SUMS 16           // their totals over the grid, read by the conservation fix
#define B_SMOKE_LEDGER 17         // the scalars' ledger: what left, decayed, burned and drifted
#define B_SMOKE_SPEED 18          // max_speed.comp: the largest face speed, buoyancy and fuel (max_cfl)
