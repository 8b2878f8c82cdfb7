// Package tune, the tuner, decides and changes placement: where a NIC's IRQs
// should go (plans), which CPUs a benchmark should get and how to say
// them to taskset, numactl, docker or systemd (picks and formats), the
// pin file, what zc prepare changes on a NIC (PlanZC), and the pin and
// restore transaction that writes a plan to the host and can always
// undo it.
package tune
