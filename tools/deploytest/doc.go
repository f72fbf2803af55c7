// Package deploytest checks cxray's deployment files: the Kubernetes base
// in contrib/kubernetes, rendered as kustomize renders it and decoded
// strictly into the Kubernetes API's own Go types. It is a module of its
// own so the Kubernetes libraries never reach cxray's go.mod or binaries;
// scripts/test.sh runs it.
package deploytest
