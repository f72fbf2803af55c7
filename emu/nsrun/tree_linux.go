package nsrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The helper is a child subreaper: processes the command leaves behind (a
// shell's background jobs) become the helper's children when their parent
// exits. They are stopped before the file system goes away, so nothing
// keeps running against a dead mount.

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parens.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			kids[pp] = append(kids[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}

// signalTree sends sig to every process below pid and says how many there
// were.
func signalTree(pid int, sig syscall.Signal) int {
	ps := descendants(pid)
	for _, p := range ps {
		_ = syscall.Kill(p, sig)
	}
	return len(ps)
}

// reap collects exited children of this process without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if p <= 0 || err != nil {
			return
		}
	}
}

// stopLeftovers ends what the command left running below this process:
// SIGTERM, then SIGKILL after grace. Call it only after the command itself
// has been waited for (it reaps any child).
func stopLeftovers(grace time.Duration) {
	self := os.Getpid()
	if signalTree(self, syscall.SIGTERM) == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		reap()
		if len(descendants(self)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	signalTree(self, syscall.SIGKILL)
	end := time.Now().Add(time.Second)
	for time.Now().Before(end) {
		reap()
		if len(descendants(self)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
