package deploytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// kubePlayPod is the DaemonSet's pod as `podman kube play` (Debian's
// podman 4.3) can run it: a Pod of the template, with only what that
// podman lacks replaced, each named here. It refuses kind DaemonSet ("YAML
// document does not contain any supported kube kind"); it resolves no
// downward API field (spec.nodeName, status.hostIP: "fieldPath ... is
// either not valid or not supported"), so they become literal values; it
// does not expand $(VAR) in args, so HOST_IP's value is put in; and it
// rejects port mappings on the host network ("PortMappings can only be
// used with Bridge or slirp4netns networking"), so the port list goes and
// the probes name the port by number. --all becomes -d emu: there is no
// adapter here. Everything else (user, read-only root, capabilities,
// privilege escalation, seccomp, probes, resources) is the base's own.
func kubePlayPod(ds *appsv1.DaemonSet, name, image, node, addr string) (*corev1.Pod, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1TypeMeta("v1", "Pod"),
		ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       *ds.Spec.Template.Spec.DeepCopy(),
	}
	pod.Name = name
	if len(pod.Spec.Containers) != 1 {
		return nil, fmt.Errorf("the pod has %d containers, want the exporter alone", len(pod.Spec.Containers))
	}
	c := &pod.Spec.Containers[0]
	c.Image = image
	values := map[string]string{"spec.nodeName": node, "status.hostIP": host}
	env := map[string]string{}
	for i, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			continue
		}
		v, ok := values[e.ValueFrom.FieldRef.FieldPath]
		if !ok {
			return nil, fmt.Errorf("env %s: no stand-in for the downward API's %s", e.Name, e.ValueFrom.FieldRef.FieldPath)
		}
		c.Env[i] = corev1.EnvVar{Name: e.Name, Value: v}
		env[e.Name] = v
	}
	for i, a := range c.Args {
		if a == "--all" {
			c.Args[i] = "-d=emu"
			continue
		}
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=" + net.JoinHostPort(host, portText)
		}
		c.Args[i] = a
	}
	if !pod.Spec.HostNetwork {
		return nil, fmt.Errorf("the pod is not on the host network; this test scrapes it there")
	}
	c.Ports = nil
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p != nil && p.HTTPGet != nil {
			p.HTTPGet.Port = intstr.FromInt32(int32(port))
		}
	}
	return pod, nil
}

// The Kubernetes base's pod, run by `podman kube play` with crun (not a
// cluster: see kubePlayPod for what podman 4.3 cannot take), serves the
// emulated adapter's metrics on the host's loopback, as the user and with
// the read-only root the base asks for, and carries the node's name as the
// host label.
func TestKubePlayPod(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPING: buildah and podman need root here")
	}
	for _, tool := range []string{"buildah", "podman", "crun"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPING: %s is not installed (scripts/setup.sh installs buildah, podman and crun)", tool)
		}
	}
	var ds appsv1.DaemonSet
	for _, o := range render(t, base) {
		if o.kind == "DaemonSet" {
			if err := strict(o.json, &ds); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	image := fmt.Sprintf("localhost/cxray-exporter:kubeplay-%d", os.Getpid())
	build := exec.CommandContext(ctx, "bash", "../../scripts/image.sh")
	build.Env = append(os.Environ(), "IMAGE="+image, "VERSION=v0.0.0-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	defer exec.Command("podman", "rmi", "-f", image).Run()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	name := fmt.Sprintf("cxray-kubeplay-%d", os.Getpid())
	pod, err := kubePlayPod(&ds, name, image, "kube-play-node", addr)
	if err != nil {
		t.Fatal(err)
	}
	// What the test keeps of the base: the security settings, unchanged.
	if d := cmp.Diff(ds.Spec.Template.Spec.SecurityContext, pod.Spec.SecurityContext); d != "" {
		t.Fatalf("the pod's security context moved (-base +pod):\n%s", d)
	}
	if d := cmp.Diff(ds.Spec.Template.Spec.Containers[0].SecurityContext, pod.Spec.Containers[0].SecurityContext); d != "" {
		t.Fatalf("the container's security context moved (-base +pod):\n%s", d)
	}
	b, err := yaml.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "pod.yaml")
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The sandbox refuses raising the open-file limit to podman's default;
	// the limits TestImage passes to podman run, here for kube play.
	if err := os.WriteFile(conf, []byte("[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	podman := func(args ...string) ([]byte, error) {
		c := podmanCmd(ctx, args...)
		c.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
		return c.CombinedOutput()
	}
	out, err := podman("kube", "play", manifest)
	defer func() {
		c := exec.Command("podman", "pod", "rm", "-f", "-t", "10", name)
		c.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
		c.Run()
	}()
	if err != nil {
		if strings.Contains(string(out), "Operation not permitted") || strings.Contains(string(out), "not supported") {
			t.Skipf("SKIPPING: podman cannot run a pod in this sandbox: %s", out)
		}
		t.Fatalf("podman kube play: %v\n%s\n%s", err, out, b)
	}

	up := regexp.MustCompile(`(?m)^cxray_device_up\{backend="emulator",device="mlx5_0",host="kube-play-node"\} 1$`)
	var body []byte
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && up.Match(body) {
				break
			}
		}
		if time.Now().After(deadline) {
			logs, _ := podman("logs", name+"-"+pod.Spec.Containers[0].Name)
			t.Fatalf("no cxray_device_up 1 for the emulated device, by mlx5_0 and the node's name, within 2 minutes (%v):\n%.800s\nlogs:\n%s", err, body, logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, fam := range []string{"cxray_firmware_info{", "cxray_nvconfig_value{"} {
		if !strings.Contains(string(body), "\n"+fam) {
			t.Errorf("the pod serves no %s... series", fam)
		}
	}

	js, err := podman("container", "inspect", name+"-"+pod.Spec.Containers[0].Name)
	if err != nil {
		t.Fatalf("podman container inspect: %v\n%s", err, js)
	}
	var inspect []struct {
		Config     struct{ User string }
		HostConfig struct {
			ReadonlyRootfs bool
			CapDrop        []string
			CapAdd         []string
			NetworkMode    string
		}
	}
	if err := json.Unmarshal(js, &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman container inspect: %v\n%s", err, js)
	}
	h := inspect[0].HostConfig
	if inspect[0].Config.User != "65534:65534" && inspect[0].Config.User != "65534" {
		t.Errorf("the container runs as %q, want the base's 65534", inspect[0].Config.User)
	}
	if !h.ReadonlyRootfs || len(h.CapAdd) != 0 || h.NetworkMode != "host" {
		t.Errorf("the container: read-only root %v, added capabilities %q, network %q; want read-only, none, host", h.ReadonlyRootfs, h.CapAdd, h.NetworkMode)
	}
}

func metav1TypeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
