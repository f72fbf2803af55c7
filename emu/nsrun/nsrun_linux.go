package nsrun

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cxray/cxray/emu/sysfs"
)

// Replaced by tests.
var (
	geteuid = os.Geteuid
	devFuse = "/dev/fuse"
)

// Check reports whether Run can work here: root, and a usable /dev/fuse.
// The error says what to do. (Whether namespaces are allowed shows only
// when Run tries.)
func Check() error {
	if geteuid() != 0 {
		return fmt.Errorf("nsrun: %w (mount(2) and FUSE); run with sudo", ErrNotRoot)
	}
	f, err := os.OpenFile(devFuse, os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("nsrun: %w: no /dev/fuse; load the fuse module (sudo modprobe fuse) or install fuse3; "+
			"in a container, pass --device /dev/fuse", ErrNoFUSE)
	case err != nil:
		return fmt.Errorf("nsrun: %w: open /dev/fuse: %v; in a container, pass --device /dev/fuse "+
			"(and allow it in the device cgroup)", ErrNoFUSE, err)
	}
	f.Close()
	return nil
}

// Run runs argv in a private mount namespace in which the devices the
// child's Builder makes from spec.Payload are served over
// /sys/bus/pci/devices. stdin, stdout and stderr go to the command
// (directly when they are *os.File, such as a terminal; nil: /dev/null).
//
// It returns the command's exit status (128+N when a signal N ended it)
// and a nil error when the command ran. If it could not be started, the
// status is -1 and the error says why (see the Err* causes). When ctx ends
// the command gets SIGTERM and, after spec.KillGrace, SIGKILL; Run then
// returns its status together with ctx's error.
//
// While Run runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process
// are caught and passed on to the command, so the caller stays alive to
// report its status. A Ctrl-C or Ctrl-\ typed at the terminal already
// reaches the command (it is in the terminal's foreground process group),
// so those are not passed on a second time.
func Run(ctx context.Context, spec Spec, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(argv) == 0 || argv[0] == "" {
		return -1, errors.New("nsrun: no command given; say what to run, e.g. `cxray emu run -- mstreg -d 0000:03:00.0 --reg_name MGIR --get`")
	}
	if err := Check(); err != nil {
		return -1, err
	}
	if spec.Mountpoint == "" {
		spec.Mountpoint = sysfs.DefaultMountpoint
	}
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = 30 * time.Second
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = 5 * time.Second
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	env = withoutVar(env, EnvChild)
	path, err := lookPath(argv[0], env, spec.Dir)
	if err != nil {
		return -1, err
	}
	hostNS, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return -1, fmt.Errorf("nsrun: %w: read this process's mount namespace: %v", ErrNoNamespace, err)
	}
	exe := spec.Exe
	if exe == "" {
		exe = "/proc/self/exe"
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return -1, fmt.Errorf("nsrun: %w", err)
	}
	req := request{
		Token: hex.EncodeToString(tok), Payload: spec.Payload, Path: path, Argv: argv, Env: env, Dir: spec.Dir,
		Mountpoint: spec.Mountpoint, Debug: spec.Debug, HostNS: hostNS, KillGrace: spec.KillGrace,
	}

	reqR, reqW, err := os.Pipe()
	if err != nil {
		return -1, fmt.Errorf("nsrun: %w", err)
	}
	defer reqW.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		return -1, fmt.Errorf("nsrun: %w", err)
	}
	defer repR.Close()

	cmd := exec.Command(exe)
	cmd.Args = []string{"cxray-emu-namespace"}
	cmd.Env = append(withoutVar(os.Environ(), EnvChild), EnvChild+"="+req.Token)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{reqR, repW} // fds 3 and 4 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Unshare (rather than clone) the mount namespace: Go then also
		// remounts / recursively private before exec, so not even the
		// child's first mount can propagate to the host.
		Unshareflags: syscall.CLONE_NEWNS,
		// If this process dies, the helper dies; its command follows
		// (see Child), and the namespace goes with them.
		Pdeathsig: syscall.SIGKILL,
	}
	// Bound the wait for copying goroutines when stdio are not files.
	cmd.WaitDelay = 2 * time.Second

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	err = cmd.Start()
	reqR.Close()
	repW.Close()
	if err != nil {
		return -1, startError(exe, err)
	}
	go func() {
		// The helper reads the request at once; if it is not a helper
		// (Child not called) the write fails or goes unread, and the
		// missing report says so below.
		_ = json.NewEncoder(reqW).Encode(req)
		reqW.Close()
	}()

	reports := make(chan report, 4)
	go readReports(repR, reports)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var (
		rep      report
		ready    bool
		setupErr string
		ctxErr   error
		waitErr  error
		done     = ctx.Done()
		killT    <-chan time.Time
		startT   = time.NewTimer(spec.StartTimeout)
	)
	defer startT.Stop()
	note := func(r report) {
		switch r.Event {
		case evReady:
			ready = true
			startT.Stop()
		case evError:
			setupErr = r.Error
		case evExit:
			rep = r
		}
	}
	for exited := false; !exited; {
		select {
		case r, ok := <-reports:
			if !ok {
				reports = nil // drained; wait for the exit
				continue
			}
			note(r)
		case s := <-sigs:
			if !fromKeyboard(s) {
				_ = cmd.Process.Signal(s)
			}
		case <-startT.C:
			if !ready {
				setupErr = fmt.Sprintf("the namespace helper did not start the command within %v", spec.StartTimeout)
				_ = cmd.Process.Kill()
			}
		case <-done:
			done, ctxErr = nil, ctx.Err()
			// The helper passes SIGTERM on and kills the command after
			// KillGrace; killing the helper is the last resort.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			killT = time.After(spec.KillGrace + 5*time.Second)
		case <-killT:
			_ = cmd.Process.Kill()
		case waitErr = <-waited:
			exited = true
		}
	}
	// The helper has exited, so its report pipe is at EOF (it is
	// close-on-exec: nothing it started holds it); the bound is a guard.
	if reports != nil {
		drain := time.NewTimer(2 * time.Second)
		defer drain.Stop()
	drainLoop:
		for {
			select {
			case r, ok := <-reports:
				if !ok {
					break drainLoop
				}
				note(r)
			case <-drain.C:
				break drainLoop
			}
		}
	}

	switch {
	case setupErr != "" && ctxErr != nil && !ready:
		return -1, fmt.Errorf("nsrun: stopped before the command started: %w", ctxErr)
	case setupErr != "":
		return -1, fmt.Errorf("nsrun: %w: %s", ErrSetup, setupErr)
	case rep.Event == evExit:
		if ctxErr != nil {
			return rep.Code, fmt.Errorf("nsrun: command stopped: %w", ctxErr)
		}
		return rep.Code, nil
	case !ready:
		return -1, fmt.Errorf("nsrun: %w: %s exited (%v) without acting as the namespace helper; "+
			"the binary must call nsrun.Child early in main", ErrSetup, exe, waitErr)
	}
	// The helper died after starting the command (killed after the grace
	// period, or by someone else); its command died with it.
	code := exitCode(cmd.ProcessState)
	if ctxErr != nil {
		return code, fmt.Errorf("nsrun: command killed: %w", ctxErr)
	}
	return code, fmt.Errorf("nsrun: the namespace helper died (%v); the command was killed with it", waitErr)
}

func readReports(r io.Reader, out chan<- report) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rep report
		if json.Unmarshal(sc.Bytes(), &rep) == nil {
			out <- rep
		}
	}
}

func startError(exe string, err error) error {
	switch {
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("nsrun: %w: %v; creating a mount namespace was refused: in a container run with "+
			"--privileged (or --cap-add SYS_ADMIN --device /dev/fuse and an unconfined seccomp/AppArmor profile)", ErrNoNamespace, err)
	case errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("nsrun: %w: %v; this kernel does not support mount namespaces", ErrNoNamespace, err)
	}
	return fmt.Errorf("nsrun: start the namespace helper %s: %w", exe, err)
}

// exitCode is the shell's view of a finished process: its exit status, or
// 128+N when signal N ended it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// lookPath resolves the command the way a shell would with env's PATH, so
// a missing tool is reported here rather than from inside the namespace.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			base := dir
			if base == "" {
				base, _ = os.Getwd()
			}
			p = filepath.Join(base, p)
		}
		if err := executable(p); err != nil {
			kind := ErrCommandNotExecutable // there, but not a program we may run
			if errors.Is(err, fs.ErrNotExist) {
				kind = ErrCommandNotFound
			}
			return "", fmt.Errorf("nsrun: %w: %s: %v", kind, name, err)
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			if !filepath.IsAbs(p) {
				base := dir
				if base == "" {
					base, _ = os.Getwd()
				}
				p = filepath.Join(base, p)
			}
			return p, nil
		}
	}
	hint := "install it or give its full path"
	if strings.HasPrefix(name, "mst") {
		hint = "install the mstflint tools (Debian/Ubuntu: apt-get install mstflint) or give the full path"
	}
	return "", fmt.Errorf("nsrun: %w: %q is not in PATH (%s); %s", ErrCommandNotFound, name, pathVar, hint)
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return errors.New("is a directory")
	}
	if st.Mode().Perm()&0o111 == 0 {
		return errors.New("not executable")
	}
	return nil
}
