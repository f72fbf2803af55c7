package deploytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/cxray/cxray/cli/exporterd"
)

const base = "../../contrib/kubernetes"

// kustomization is the part of kustomize's file the base uses; render
// refuses any other key, so the test never passes a base it did not
// render as kustomize would.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
}

// object is one rendered resource: its kind and its YAML turned to JSON.
type object struct {
	kind, name string
	json       []byte
}

// strict decodes JSON into v, refusing a field v's type does not have.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// render reads the base as kustomize does for the keys it uses: every
// resource file's documents, with the namespace set on namespaced kinds.
func render(t *testing.T, dir string) []object {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := strict(js, &k); err != nil {
		t.Fatalf("kustomization.yaml uses what this renderer does not: %v", err)
	}
	var out []object
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s document %d: %v", r, i+1, err)
			}
			var m map[string]any
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			kind, _ := m["kind"].(string)
			meta, _ := m["metadata"].(map[string]any)
			if meta == nil {
				t.Fatalf("%s: no metadata", r)
			}
			if kind != "Namespace" && k.Namespace != "" {
				meta["namespace"] = k.Namespace
			}
			js, _ = json.Marshal(m)
			out = append(out, object{kind: kind, name: fmt.Sprint(meta["name"]), json: js})
		}
	}
	return out
}

// The Kubernetes base renders to objects every one of which decodes
// strictly into the API's types, and which fit together: the Service and
// the ServiceMonitor select the DaemonSet's pods and name its port, the pod
// runs unprivileged with nothing added, its node name comes from the
// downward API, nodes are picked by Node Feature Discovery's label, and
// cxray-exporter accepts its arguments.
func TestKustomizeBase(t *testing.T) {
	objs := render(t, base)
	var (
		ds   appsv1.DaemonSet
		svc  corev1.Service
		sm   monitoringv1.ServiceMonitor
		ns   corev1.Namespace
		sa   corev1.ServiceAccount
		seen []string
	)
	for _, o := range objs {
		var dst any
		switch o.kind {
		case "DaemonSet":
			dst = &ds
		case "Service":
			dst = &svc
		case "ServiceMonitor":
			dst = &sm
		case "Namespace":
			dst = &ns
		case "ServiceAccount":
			dst = &sa
		default:
			t.Fatalf("unexpected kind %s", o.kind)
		}
		if err := strict(o.json, dst); err != nil {
			t.Errorf("%s %s does not decode strictly into the API's type: %v", o.kind, o.name, err)
		}
		seen = append(seen, o.kind)
	}
	if diff := cmp.Diff([]string{"Namespace", "ServiceAccount", "DaemonSet", "Service", "ServiceMonitor"}, seen); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	for _, m := range []struct{ kind, ns string }{{"DaemonSet", ds.Namespace}, {"Service", svc.Namespace}, {"ServiceMonitor", sm.Namespace}, {"ServiceAccount", sa.Namespace}} {
		if m.ns != ns.Name {
			t.Errorf("%s in namespace %q, want %q", m.kind, m.ns, ns.Name)
		}
	}

	pod := ds.Spec.Template
	sel, err := labels.ValidatedSelectorFromSet(ds.Spec.Selector.MatchLabels)
	if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the DaemonSet's selector %v does not select its pods %v (%v)", ds.Spec.Selector.MatchLabels, pod.Labels, err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service selects %v, not the pods %v", svc.Spec.Selector, pod.Labels)
	}
	if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor selects %v, not the Service %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	if pod.Spec.ServiceAccountName != sa.Name {
		t.Errorf("pods run as %q, the account is %q", pod.Spec.ServiceAccountName, sa.Name)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if len(svc.Spec.Ports) != 1 || ports[svc.Spec.Ports[0].TargetPort.String()] == 0 {
		t.Errorf("the Service's target port %v is not a port of the container %v", svc.Spec.Ports, ports)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor's endpoint %+v does not name the Service's port %q and /metrics", sm.Spec.Endpoints, svc.Spec.Ports[0].Name)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("the Service is not headless (clusterIP %q): Prometheus must reach each node's exporter", svc.Spec.ClusterIP)
	}

	// Unprivileged, read-only, nothing added.
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("the pod may run as root: %+v", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.Privileged != nil && *sc.Privileged {
		t.Errorf("the container is not locked down: %+v", sc)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("a service account token is mounted, and the exporter asks the API server nothing")
	}
	if !pod.Spec.HostNetwork {
		t.Error("not in the node's network namespace: the adapters' interfaces, devlink and ethtool would not be seen")
	}
	for k, v := range pod.Spec.NodeSelector {
		if !strings.HasPrefix(k, "feature.node.kubernetes.io/pci-") || v != "true" {
			t.Errorf("node selector %s=%s is not Node Feature Discovery's PCI label", k, v)
		}
	}
	if len(pod.Spec.NodeSelector) == 0 {
		t.Error("no node selector: the exporter would run on nodes without an adapter")
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["NODE_NAME"] != "spec.nodeName" {
		t.Errorf("NODE_NAME comes from %q, want the downward API's spec.nodeName", env["NODE_NAME"])
	}

	// cxray-exporter takes the arguments, with Kubernetes' $(VAR)
	// expansion done.
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, "$(HOST_IP)", "10.0.0.7")
		if strings.Contains(args[i], "$(") {
			t.Errorf("argument %q names a variable the pod does not set", a)
		}
	}
	flags, err := exporterd.ParseArgs(args)
	if err != nil {
		t.Fatalf("cxray-exporter refuses the DaemonSet's arguments %q: %v", args, err)
	}
	if got := flags["web.listen-address"]; got != "10.0.0.7:9879" || ports["metrics"] != 9879 {
		t.Errorf("listens on %s, the container port is %d", got, ports["metrics"])
	}
}
