// Package deploy holds no code: it is the deployment files of irqnuma
// (systemd units, a Kubernetes DaemonSet, Prometheus alert rules), and
// its tests check them against the exporter they deploy.
package deploy
