/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The struct_ops wrappers every schedlab sched_ext scheduler has. SL_OPS_CORE(NAME, P)
 * defines NAME_select_cpu ... NAME_exit calling P_select_cpu ... P_init (P = sl for the
 * LLF family, fair for bfs/cfsw), one BPF program per callback whose name carries the
 * policy; SL_OPS_CORE_FIELDS(NAME) lists them for SCX_OPS_DEFINE.
 */
#ifndef __SCHEDLAB_OPS_BPF_H
#define __SCHEDLAB_OPS_BPF_H

#define SL_OPS_CORE(NAME, P)                                                       \
	s32 BPF_STRUCT_OPS(NAME##_select_cpu, struct task_struct *p, s32 prev_cpu, \
			   u64 wake_flags)                                         \
	{                                                                          \
		return P##_select_cpu(p, prev_cpu, wake_flags);                    \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_enqueue, struct task_struct *p, u64 enq_flags)  \
	{                                                                          \
		P##_enqueue(p, enq_flags);                                         \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_dispatch, s32 cpu, struct task_struct *prev)    \
	{                                                                          \
		P##_dispatch(cpu, prev);                                           \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_tick, struct task_struct *p)                    \
	{                                                                          \
		P##_tick(p);                                                       \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_running, struct task_struct *p)                 \
	{                                                                          \
		P##_running(p);                                                    \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_stopping, struct task_struct *p, bool runnable) \
	{                                                                          \
		P##_stopping(p, runnable);                                         \
	}                                                                          \
	s32 BPF_STRUCT_OPS(NAME##_init_task, struct task_struct *p,                \
			   struct scx_init_task_args *args)                        \
	{                                                                          \
		return P##_init_task(p, args);                                     \
	}                                                                          \
	s32 BPF_STRUCT_OPS_SLEEPABLE(NAME##_init)                                  \
	{                                                                          \
		return P##_init();                                                 \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_exit, struct scx_exit_info *ei)                 \
	{                                                                          \
		UEI_RECORD(uei, ei);                                               \
	}

#define SL_OPS_CORE_FIELDS(NAME)                                                   \
	.select_cpu = (void *)NAME##_select_cpu, .enqueue = (void *)NAME##_enqueue, \
	.dispatch = (void *)NAME##_dispatch, .tick = (void *)NAME##_tick,          \
	.running = (void *)NAME##_running, .stopping = (void *)NAME##_stopping,    \
	.init_task = (void *)NAME##_init_task, .init = (void *)NAME##_init,        \
	.exit = (void *)NAME##_exit

#endif /* __SCHEDLAB_OPS_BPF_H */
