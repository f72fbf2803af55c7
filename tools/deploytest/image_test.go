package deploytest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// podmanCmd runs podman with args. Where the host's cgroups are mixed
// (cgroup v1 controllers and a v2 hierarchy, as in some sandboxes) crun
// refuses to start a container; podman then runs in a private mount
// namespace of the test's own (unshare) in which the v2 hierarchy is not
// mounted, with cgroups off, and the namespace goes with the process.
func podmanCmd(ctx context.Context, args ...string) *exec.Cmd {
	run := append([]string{"podman", "--cgroup-manager=cgroupfs"}, args...)
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil {
		script := `umount /sys/fs/cgroup/unified && exec "$@"`
		return exec.CommandContext(ctx, "unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh"}, run...)...)
	}
	return exec.CommandContext(ctx, run[0], run[1:]...)
}

// runFlags are podman run's flags for the image: as the image says
// (nobody), read-only root, no capability, no new privileges, the host's
// loopback for the scrape, and limits the sandbox allows.
var runFlags = []string{"run", "--rm", "--network", "host", "--read-only", "--cap-drop", "ALL",
	"--security-opt", "no-new-privileges", "--cgroups=disabled", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}

// TestImage builds the image with scripts/image.sh (buildah, no Docker
// daemon) and runs it under podman and crun against -d emu: as nobody,
// read-only, with every capability dropped, it serves /metrics that a
// scrape reads with the device up, and --once writes the same families.
func TestImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPING the image test: buildah and podman need root here")
	}
	for _, tool := range []string{"buildah", "podman", "crun"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPING the image test: %s is not installed (scripts/setup.sh installs buildah, podman and crun)", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	image := fmt.Sprintf("localhost/cxray-exporter:test-%d", os.Getpid())
	build := exec.CommandContext(ctx, "bash", "../../scripts/image.sh")
	build.Env = append(os.Environ(), "IMAGE="+image, "VERSION=v0.0.0-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	defer exec.Command("podman", "rmi", "-f", image).Run()

	out, err := exec.CommandContext(ctx, "podman", "image", "inspect", image).Output()
	if err != nil {
		t.Fatal(err)
	}
	var inspect []struct {
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
			Env        []string
		}
		RootFS struct{ Layers []string }
	}
	if err := json.Unmarshal(out, &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	cfg := inspect[0].Config
	if cfg.User != "65534:65534" || !cmp.Equal(cfg.Entrypoint, []string{"/cxray-exporter"}) || !cmp.Equal(cfg.Cmd, []string{"--all", "--web.listen-address=:9879"}) {
		t.Errorf("image config: user %q, entrypoint %q, cmd %q", cfg.User, cfg.Entrypoint, cfg.Cmd)
	}
	if len(inspect[0].RootFS.Layers) != 1 {
		t.Errorf("%d layers; the image is the exporter alone, from scratch", len(inspect[0].RootFS.Layers))
	}

	// The version stamped, no shell in the image.
	v, err := podmanCmd(ctx, append(runFlags, image, "--version")...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(v)) != "cxray-exporter v0.0.0-test" {
		if strings.Contains(string(v), "Operation not permitted") || strings.Contains(string(v), "not supported") {
			t.Skipf("SKIPPING: podman cannot run a container in this sandbox: %s", v)
		}
		t.Fatalf("--version in the image: %v %q", err, v)
	}
	if sh, err := podmanCmd(ctx, append(runFlags, "--entrypoint", "/bin/sh", image, "-c", "true")...).CombinedOutput(); err == nil {
		t.Errorf("the image has a shell: %s", sh)
	}

	// Serve, scrape, stop.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	serve := podmanCmd(ctx, append(runFlags, image, "-d", "emu", "--web.listen-address="+addr, "--host.name=image-test")...)
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- serve.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			serve.Process.Kill()
			<-done
		}
	}()
	ready := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "cxray exporter serving") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("the container stopped before serving:\n%s", log.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the container did not start serving:\n%s", log.String())
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	up := regexp.MustCompile(`(?m)^cxray_device_up\{backend="emulator",device="0000:03:00.0",host="image-test"\} 1$`)
	if resp.StatusCode != 200 || !up.Match(body) {
		t.Errorf("scrape of the container: %d, no cxray_device_up 1 for the emulated device:\n%.800s", resp.StatusCode, body)
	}
	for _, fam := range []string{"cxray_firmware_info{", "cxray_nvconfig_value{", "cxray_module_rx_power_dbm{"} {
		if !strings.Contains(string(body), "\n"+fam) {
			t.Errorf("the container serves no %s... series", fam)
		}
	}

	once, err := podmanCmd(ctx, append(runFlags, image, "-d", "emu", "--once", "--host.name=image-test")...).Output()
	if err != nil || !up.Match(once) {
		t.Errorf("--once in the container: %v\n%.400s", err, once)
	}
}
