// Package bench runs a user's benchmark once per placement of a NIC's
// queue interrupts, the benchmark and its memory, and says what each
// placement gave: the benchmark's own result, the load of the CPUs it
// and the interrupts ran on, the NIC's interrupt and NET_RX rates and
// whether its softirq was the bottleneck, with median, min and max over
// repeated runs.
//
// It is built from the pieces the other commands use: the pin and
// restore transaction of package tune (state file, lock, rollback)
// places the IRQs, tune.PickOn picks the CPUs, internal/tune/sched starts
// the command with its CPU affinity and memory policy set before it
// runs, and a watch.Sampler measures each run. The host is read and
// audited before anything changes, and every IRQ placed is restored
// when the placements that need it are done, when a run fails and when
// the context is cancelled (a stop signal).
package bench
