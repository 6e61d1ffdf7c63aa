// The scalars' ledger on the GPU (SmokeGrid.ledger), in cell units, per scalar (x density, y heat
// T - T_ambient, z fuel): what left through open sides (net), what the dissipation took, what
// combustion changed and what the advection alone changed the total by (its drift, which the
// conservation fix takes back). Two slots: a substep books from one into the other, which SmokeGrid takes as the
// current one once the substep stands, so a substep run again or undone books nothing twice.
struct LedgerSlot { dvec4 outflow; dvec4 dissipation; dvec4 combustion; dvec4 drift; };
layout(std430, binding = B_SMOKE_LEDGER) restrict buffer Ledger { LedgerSlot u_ledger[2]; };
uniform int u_ledger_from;      // the current slot
