/*
 * step_cmd.c -- the record steps on a command line: each step's group of
 * options (--NAME first, then its own), added to every command that reads
 * records, so a step's options are spelled, parsed and documented once for
 * all of them; and the checks after parsing.
 *
 * Main thread only, before any worker exists.
 */
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define OPTS_MAX 24 /* a step's options, with --NAME and the end mark */

static ss_opt_t lists[SS_STEPS_MAX][OPTS_MAX]; /* [step]: --NAME, its options, SS_OPT_END */
static int built;                              /* how many steps' lists are built */
static const char *first_given[SS_STEPS_MAX];  /* the first of a step's options given */

void ss_steps_build_opts(void)
{
    for (int i = 0; i < ss_steps_n(); i++) {
        const ss_step_t *s = ss_steps_get(i);
        int n = 0;
        lists[i][n++] = (ss_opt_t){SS_OPT_STEP_FLAG + i, 0, s->name, NULL, s->help, NULL};
        for (const ss_opt_t *o = s->opts; o && o->key && n < OPTS_MAX - 1; o++)
            lists[i][n++] = *o;
        lists[i][n] = (ss_opt_t)SS_OPT_END;
    }
    built = ss_steps_n();
}

/* Step i's group: with --NAME, or without it where the command is the step. */
static ss_opt_group_t step_group(const ss_cmd_t *cmd, int i)
{
    const ss_step_t *s = ss_steps_get(i);
    int is_cmd = cmd->step && strcmp(cmd->step, s->name) == 0;
    return (ss_opt_group_t){s->title, is_cmd ? &lists[i][1] : lists[i], is_cmd ? NULL : s->note};
}

/* Whether cmd is ss_cmd_with_steps' copy already (--help from inside the parser). */
static int has_steps(const ss_cmd_t *cmd)
{
    for (const ss_opt_group_t *g = cmd->groups; g->title; g++)
        if (ss_steps_owner(g->opts) >= 0)
            return 1;
    return 0;
}

const ss_cmd_t *ss_cmd_with_steps(const ss_cmd_t *cmd, ss_cmd_steps_t *tmp)
{
    if ((!cmd->steps && !cmd->step) || ss_steps_n() == 0)
        return cmd;
    if (has_steps(cmd))
        return cmd;
    int max = (int)(sizeof(tmp->groups) / sizeof(tmp->groups[0])) - 1, n = 0, added = 0;
    tmp->cmd = *cmd;
    for (const ss_opt_group_t *g = cmd->groups; g->title && n < max; g++) {
        if (!added && g->opts == ss_opts_run) { /* the steps before the framework's options */
            for (int i = 0; i < ss_steps_n() && n < max; i++) {
                ss_opt_group_t sg = step_group(cmd, i);
                /* none for a step that is the command and has no options of its own */
                if ((cmd->steps || strcmp(cmd->step, ss_steps_get(i)->name) == 0) && sg.opts->key)
                    tmp->groups[n++] = sg;
            }
            added = 1;
        }
        tmp->groups[n++] = *g;
    }
    tmp->groups[n] = (ss_opt_group_t){NULL, NULL, NULL};
    tmp->cmd.groups = tmp->groups;
    return &tmp->cmd;
}

int ss_steps_owner(const ss_opt_t *o)
{
    for (int i = 0; i < built; i++)
        if (o >= lists[i] && o < lists[i] + OPTS_MAX)
            return i;
    return -1;
}

int ss_steps_apply(ss_common_opts_t *co, int i, const ss_opt_t *o, const char *arg, const char *cmd)
{
    void *so = ss_steps_opts(co, i);
    if (!so)
        return -1;
    if (o == &lists[i][0]) {
        co->step_on[i] = 1;
        return 0;
    }
    if (!first_given[i])
        first_given[i] = o->name;
    return ss_steps_get(i)->opt(so, o->key, arg, co, cmd);
}

int ss_steps_begin(const ss_cmd_t *cmd, ss_common_opts_t *co)
{
    int i = ss_steps_find(cmd->step);
    for (int k = 0; k < SS_STEPS_MAX; k++)
        first_given[k] = NULL;
    if (i < 0)
        return 0;
    co->step_on[i] = 1;
    return ss_steps_opts(co, i) ? 0 : -1;
}

int ss_steps_end(const ss_cmd_t *cmd, ss_common_opts_t *co)
{
    for (int i = 0; i < ss_steps_n(); i++) {
        const ss_step_t *s = ss_steps_get(i);
        if (co->step_opts[i] && !co->step_on[i]) {
            fprintf(stderr, "seqshard %s: --%s is an option of --%s: give --%s too\n", cmd->name,
                    first_given[i] ? first_given[i] : "?", s->name, s->name);
            return -1;
        }
        if (co->step_on[i] && s->check && s->check(co->step_opts[i], co, cmd->name) < 0)
            return -1;
    }
    return 0;
}
