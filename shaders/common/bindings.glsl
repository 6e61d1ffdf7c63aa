// Binding points, defined once: hydro/_gl.py reads the B_* names from this file.
// hydro binds these during its own calls only; a game keeps the other units for itself.

// images (r32f)
#define B_TERRAIN 0
#define B_WATER 1
#define B_OUT_IMAGE 2

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
