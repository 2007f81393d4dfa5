// Times MuJoCo's own mj_forward and mj_step from a given state, the same way `diffmj bench`
// does (median over batches of 10 calls; step restarts from the initial state every 1000
// steps), so that bench/compare.py can report ratios measured in one run without Python call
// overhead. Usage: mjbench MODEL.xml STATE.bin NCALLS [disable_constraint]
// STATE.bin: doubles qpos[nq], qvel[nv], act[na], ctrl[nu].
// Also prints MuJoCo's own stage timers over the forward calls (mean microseconds per call,
// the timers' overhead included) as stages_us, named like `diffmj bench`'s.
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// MuJoCo's timer callback: its stage timers record whatever this returns (here microseconds)
static mjtNum timer_us(void) { return now_us(); }

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: mjbench MODEL.xml STATE.bin NCALLS [disable_constraint]\n");
    return 1;
  }
  char err[1000];
  mjModel* m = mj_loadXML(argv[1], NULL, err, sizeof(err));
  if (!m) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  if (argc > 4 && atoi(argv[4])) m->opt.disableflags |= mjDSBL_CONSTRAINT;
  int n = atoi(argv[3]);
  mjData* d0 = mj_makeData(m);
  FILE* f = fopen(argv[2], "rb");
  if (!f) return 1;
  size_t ok = fread(d0->qpos, sizeof(double), m->nq, f);
  ok += fread(d0->qvel, sizeof(double), m->nv, f);
  ok += fread(d0->act, sizeof(double), m->na, f);
  ok += fread(d0->ctrl, sizeof(double), m->nu, f);
  fclose(f);
  if (ok != (size_t)(m->nq + m->nv + m->na + m->nu)) return 1;
  mjData* d = mj_makeData(m);
  int nb = n / 10 > 0 ? n / 10 : 1;
  double* t = malloc(nb * sizeof(double));
  mj_copyData(d, m, d0);
  for (int b = 0; b < nb; b++) {
    double s = now_us();
    for (int k = 0; k < 10; k++) mj_forward(m, d);
    t[b] = (now_us() - s) / 10;
  }
  qsort(t, nb, sizeof(double), cmp);
  double fwd = t[nb / 2];
  // the stage timers in a separate pass, so that their overhead stays out of the median
  mjcb_time = timer_us;
  for (int i = 0; i < mjNTIMER; i++) d->timer[i].duration = 0, d->timer[i].number = 0;
  for (int k = 0; k < n; k++) mj_forward(m, d);
  mjcb_time = NULL;
  // mean microseconds per forward of one timer
#define STAGE(id) (d->timer[id].duration / n)
  char stages[600];
  snprintf(stages, sizeof(stages),
           "{\"position_smooth\": %.4f, \"collision\": %.4f, \"make_constraint\": %.4f, "
           "\"velocity\": %.4f, \"constraint\": %.4f}",
           STAGE(mjTIMER_POS_KINEMATICS) + STAGE(mjTIMER_POS_INERTIA),
           STAGE(mjTIMER_POS_COLLISION), STAGE(mjTIMER_POS_MAKE), STAGE(mjTIMER_VELOCITY),
           STAGE(mjTIMER_CONSTRAINT));
  mj_copyData(d, m, d0);
  int k = 0;
  for (int b = 0; b < nb; b++) {
    double s = now_us();
    for (int i = 0; i < 10; i++, k++) {
      if (k % 1000 == 0) mj_copyData(d, m, d0);
      mj_step(m, d);
    }
    t[b] = (now_us() - s) / 10;
  }
  qsort(t, nb, sizeof(double), cmp);
  printf("{\"forward_us\": %.4f, \"step_us\": %.4f, \"stages_us\": %s}\n", fwd, t[nb / 2],
         stages);
  free(t);
  mj_deleteData(d);
  mj_deleteData(d0);
  mj_deleteModel(m);
  return 0;
}
