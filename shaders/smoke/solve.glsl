// A multigrid solve to a tolerance decided on the GPU (hydro.smoke_pressure.Pressure._solve_to): after
// the solve's unconditional cycles and after each conditional one, the pass that folds the cycle's
// residual norms (prolong_smooth.comp's last group, or reduce.comp) calls decide(); the passes of a
// conditional cycle (u_conditional) return at once unless it left u_state.running set. No readback:
// the CPU reads u_state a step late through a fenced ring.
// The stopping test is the CPU's (hydro.smoke_pressure): go on while the relative residual is above
// u_tolerance, the last cycle cut it to at most u_stagnation of the one before, fewer than u_cap
// cycles ran and a conditional cycle is left (u_slot < u_extra: u_slot 0 after the u_batch
// unconditional cycles, k after conditional cycle k).
struct Solve {
    double previous;      // relative residual before the last cycle that ran (1 before the first)
    double now;           // relative residual after it
    double after_batch;   // relative residual after the unconditional cycles
    double worst;         // largest final residual of the solves counted in `solves`
    uint cycles;          // cycles run (0: b = 0, nothing to solve)
    uint batch;           // unconditional cycles
    uint running;         // 1 while the next conditional cycle is to run
    uint solves;          // solves finished since the buffer was cleared
    uint over;            // of those, the ones that ended above the tolerance,
    uint short_;          // of which the ones that ran out of conditional cycles
    uint total;           // the cycles of all of them
};
layout(std430, binding = B_SMOKE_SOLVE) coherent buffer State { Solve u_state; };
uniform int u_conditional;
uniform int u_decide;
uniform int u_slot;
uniform int u_extra;
uniform int u_batch;
uniform int u_cap;
uniform double u_tolerance;
uniform double u_stagnation;

// Whether this pass is in a conditional cycle that is not to run (the same for every invocation).
bool skip_cycle() {
    return u_conditional != 0 && u_state.running == 0u;
}

// Called by one invocation with the norms of the cycle just run.
void decide(double r2, double b2) {
    double relative = b2 > 0.0 ? sqrt(r2) / sqrt(b2) : 0.0;
    Solve s = u_state;
    if (u_slot == 0) {
        s.cycles = b2 > 0.0 ? uint(u_batch) : 0u;     // b = 0: the cycles left q = 0 and nothing is to do
        s.batch = uint(u_batch);
        s.previous = 1.0;                              // the relative residual of q = 0 (a warm start's is <= 1)
        s.now = relative;
        s.after_batch = relative;
    } else {
        s.cycles += 1u;
        s.previous = s.now;
        s.now = relative;
    }
    bool more = s.cycles > 0u && s.now > u_tolerance && s.now <= u_stagnation * s.previous
                && s.cycles < uint(u_cap);
    s.running = more && u_slot < u_extra ? 1u : 0u;
    if (s.running == 0u) {                             // the solve ends here
        s.solves += 1u;
        s.total += s.cycles;
        if (s.cycles > 0u) {
            s.worst = max(s.worst, s.now);
            if (s.now > u_tolerance) s.over += 1u;
            if (more) s.short_ += 1u;
        }
    }
    u_state = s;
}
