package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The node the tests model: two pods under CRI-O, as the kubelet and
// CRI-O name their folders and groups.
const (
	uidA   = "7d1c3b9e-5a4f-4e2b-9c8d-0123456789ab"                             // default/iperf-server, Guaranteed
	uidB   = "0f9e8d7c-6b5a-4f3e-8d2c-1b0a99887766"                             // kube-system/burst-0, Burstable
	idA    = "3f2e9a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b" // iperf3
	idSbox = "aa11bb22cc33dd44ee55ff6600778899aabbccddeeff00112233445566778899" // A's sandbox
	idB    = "5b6c7d8e9fa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6" // app
)

// writeTree writes files (relative path → content) under root; a content
// starting "->" is a symbolic link to the rest.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := cutLink(data); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func cutLink(s string) (string, bool) {
	if len(s) > 2 && s[:2] == "->" {
		return s[2:], true
	}
	return "", false
}

// process writes the /proc files SelectPresent reads of pid.
func process(files map[string]string, pid int, comm, cgroup string) {
	d := fmt.Sprintf("proc/%d/", pid)
	files[d+"comm"] = comm + "\n"
	files[d+"status"] = "Name:\t" + comm + "\nState:\tS (sleeping)\nCpus_allowed_list:\t2-3\nMems_allowed_list:\t0-1\n"
	files[d+"cgroup"] = "0::" + cgroup + "\n"
	stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 221 0 0 0 90 6 0 0 20 0 1 0 2869 "+
		"12345678 340 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, pid, pid)
	files[d+"stat"] = stat
	files[fmt.Sprintf("%stask/%d/stat", d, pid)] = stat
	files[fmt.Sprintf("%stask/%d/status", d, pid)] = files[d+"status"]
}

// logs writes the kubelet's log folders of a pod's named containers.
func logs(files map[string]string, ns, name, uid string, ctrs map[string]string) {
	for c, id := range ctrs {
		dir := fmt.Sprintf("var/log/pods/%s_%s_%s/%s", ns, name, uid, c)
		files[dir+"/0.log"] = ""
		files[fmt.Sprintf("var/log/containers/%s_%s_%s-%s.log", name, ns, c, id)] = "->/" + dir + "/0.log"
	}
}

// group writes a v2 group's files.
func group(files map[string]string, dir, cpus string, pids ...int) {
	procs := ""
	for _, p := range pids {
		procs += fmt.Sprintf("%d\n", p)
	}
	files["sys/fs/cgroup/"+dir+"/cgroup.procs"] = procs
	files["sys/fs/cgroup/"+dir+"/cpuset.cpus.effective"] = cpus + "\n"
	files["sys/fs/cgroup/"+dir+"/cpuset.mems.effective"] = "0-1\n"
	files["sys/fs/cgroup/"+dir+"/cpuset.cpus.partition"] = "member\n"
}

// eightCPUs are the CPU files of the node the tests model: CPUs 0-7,
// all online, the kernel's possible and online lists only.
func eightCPUs(files map[string]string) {
	files["sys/devices/system/cpu/possible"] = "0-7\n"
	files["sys/devices/system/cpu/online"] = "0-7\n"
}

// v2SystemdTree is a cgroup v2 node under the systemd driver (CPUs 0-7): the
// Guaranteed pod's group right under kubepods.slice, the Burstable one
// under its QoS slice, CRI-O's conmon groups beside the containers'.
func v2SystemdTree(t *testing.T, checkpoint string) string {
	root := t.TempDir()
	files := map[string]string{
		"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
		"sys/fs/cgroup/cgroup.procs":       "1\n",
	}
	podA := "kubepods.slice/kubepods-pod7d1c3b9e_5a4f_4e2b_9c8d_0123456789ab.slice"
	podB := "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f9e8d7c_6b5a_4f3e_8d2c_1b0a99887766.slice"
	group(files, podA+"/crio-"+idA+".scope", "2-3", 4301)
	group(files, podA+"/crio-"+idSbox+".scope", "0-1,4-7", 4300)
	group(files, podA+"/crio-conmon-"+idA+".scope", "0-1,4-7", 4299)
	group(files, podB+"/crio-"+idB+".scope", "0-1,4-7", 4401)
	process(files, 4301, "iperf3", "/"+podA+"/crio-"+idA+".scope")
	process(files, 4300, "pause", "/"+podA+"/crio-"+idSbox+".scope")
	process(files, 4401, "app", "/"+podB+"/crio-"+idB+".scope")
	logs(files, "default", "iperf-server", uidA, map[string]string{"iperf3": idA})
	logs(files, "kube-system", "burst-0", uidB, map[string]string{"app": idB})
	eightCPUs(files)
	if checkpoint != "" {
		files[CheckpointFile] = checkpoint
	}
	writeTree(t, root, files)
	return root
}

// v1CgroupfsTree is a cgroup v1 node under the cgroupfs driver (CPUs
// 0-7) with containerd's names (the container's ID alone).
func v1CgroupfsTree(t *testing.T, checkpoint string) string {
	root := t.TempDir()
	files := map[string]string{}
	v1 := func(dir, cpus string, pid int) {
		d := "sys/fs/cgroup/cpuset/" + dir
		files[d+"/cgroup.procs"] = fmt.Sprintf("%d\n", pid)
		files[d+"/cpuset.effective_cpus"] = cpus + "\n"
		files[d+"/cpuset.effective_mems"] = "0-1\n"
		files[d+"/cpuset.cpu_exclusive"] = "0\n"
		process(files, pid, "c", "/"+dir)
	}
	files["sys/fs/cgroup/cpuset/cgroup.procs"] = "1\n"
	v1("kubepods/pod"+uidA+"/"+idA, "2-3", 4301)
	v1("kubepods/pod"+uidA+"/"+idSbox, "0-1,4-7", 4300)
	v1("kubepods/burstable/pod"+uidB+"/"+idB, "0-1,4-7", 4401)
	logs(files, "default", "iperf-server", uidA, map[string]string{"iperf3": idA})
	logs(files, "kube-system", "burst-0", uidB, map[string]string{"app": idB})
	eightCPUs(files)
	files[CheckpointFile] = checkpoint
	writeTree(t, root, files)
	return root
}
