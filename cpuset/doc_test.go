package cpuset_test

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

func ExampleParseMask() {
	// /proc/irq/N/smp_affinity on a 64-CPU host.
	s, err := cpuset.ParseMask("00040000,00000000")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.List())
	fmt.Println(s.Taskset())
	// Output:
	// 50
	// 0x4000000000000
}

func ExampleParseList() {
	// The kernel's group form: the first 2 CPUs of every 8.
	s, err := cpuset.ParseList("0-31:2/8")
	if err != nil {
		panic(err)
	}
	fmt.Println(s)
	fmt.Println(s.Mask(32))
	// Output:
	// 0-1,8-9,16-17,24-25
	// 03030303
}

func ExampleSet_Mask() {
	// Masks are padded to the host's CPU count the way the kernel prints them.
	s := cpuset.Range(0, 47)
	fmt.Println(s.Mask(48))
	fmt.Println(cpuset.New(0).Mask(64))
	fmt.Println(cpuset.New(0, 1).Mask(2))
	// Output:
	// ffff,ffffffff
	// 00000000,00000001
	// 3
}

func ExampleSet_Difference() {
	node0, _ := cpuset.ParseList("0-63:2")
	isolated, _ := cpuset.ParseList("2-9")
	fmt.Println(node0.Difference(isolated).First(4))
	// Output:
	// 0,10,12,14
}
