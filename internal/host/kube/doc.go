// Package kube finds the control groups of Kubernetes pods and
// containers on a node, and the CPUs the kubelet gave them, for --pod and
// --container: from the kubelet's pod resources API (podresources.go, a
// gRPC client written against the v1 protobuf over net/http's HTTP/2, so
// the CLI links no gRPC), else from the CPU manager's checkpoint
// (checkpoint.go); pod names from /var/log/pods and container IDs from
// /var/log/containers (logs.go); the groups from the cgroup tree by pod
// UID (cgroups.go). Resolve fills a proc.Selection's Resolved; ResolveAll
// first adds every pod the node runs, within a bound (all.go).
package kube
