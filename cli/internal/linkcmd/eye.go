package linkcmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/linkeye"
)

// eyeOptions are mlxlink's --show_eye and --margin flags.
type eyeOptions struct {
	show, margin bool
	lane         int
	measureTime  int
	eyeSelect    string
	lanes        []int // parsed from --lane or --lanes
}

// eyeFlags select the eye mode (--lanes alone belongs to the PRBS test).
var eyeFlags = []string{"show_eye", "eye", "margin", "measure_time", "eye_select", "lane"}

// addEyeFlags registers the eye flags. It runs after every other flag of
// the verb: --lanes is also the PRBS test's (mlxlink's name for both), so
// it is registered here only when no other mode did, and read by its text
// whatever its type.
func addEyeFlags(c *cobra.Command, o *eyeOptions) {
	c.Flags().BoolVarP(&o.show, "show_eye", "e", false, "each lane's receive eye (SLRG): figure of merit or grade, the PAM4 eyes, height and width")
	c.Flags().BoolVar(&o.show, "eye", false, "short for --show_eye")
	c.Flags().BoolVar(&o.margin, "margin", false, "run the SerDes eye margin scan per lane (SLRED; takes --measure_time per eye and lane; asks unless --yes)")
	c.Flags().IntVar(&o.measureTime, "measure_time", 30, "with --margin: seconds per eye, one of 10, 30, 60, 90, 120, 240, 480, 600, 900")
	c.Flags().StringVar(&o.eyeSelect, "eye_select", "", "with --margin on a PAM4 link: UP, MID, DOWN or ALL (default ALL)")
	c.Flags().IntVar(&o.lane, "lane", -1, "with --show_eye or --margin: one lane (default every lane)")
	if c.Flags().Lookup("lanes") == nil {
		c.Flags().String("lanes", "", "with --show_eye or --margin: lanes, comma-separated (0,2)")
	}
}

// parseLanes reads a lane list: "0,2", or a slice flag's "[0,2]".
func parseLanes(s string) ([]int, error) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "[]"))
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 7 {
			return nil, fmt.Errorf("lane %q: give lane numbers 0..7, comma-separated (0,2)", strings.TrimSpace(f))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("lane %d is given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

func checkEyeFlags(cmd *cobra.Command, o *eyeOptions) error {
	for _, f := range append(append([]string{"all", "counters", "interval", "clear", "pcie", "cable", "wait"}, changeFlags...), histFlags...) {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--%s is not for the eye (--show_eye, --margin): run them apart", f)
		}
	}
	switch {
	case o.show == o.margin:
		return cmdutil.UsageErr("give --show_eye (the eye the receiver keeps) or --margin (a margin scan); --lane, --measure_time and --eye_select go with them")
	case o.show && changed(cmd, "measure_time", "eye_select", "dry-run", "force"):
		return cmdutil.UsageErr("--measure_time, --eye_select, --dry-run and --force go with --margin")
	case changed(cmd, "lane") && changed(cmd, "lanes"):
		return cmdutil.UsageErr("--lane and --lanes: give one")
	}
	if changed(cmd, "lane") {
		if o.lane < 0 || o.lane > 7 {
			return cmdutil.UsageErr("--lane %d: lanes are numbered 0..7", o.lane)
		}
		o.lanes = []int{o.lane}
	}
	if changed(cmd, "lanes") {
		ls, err := parseLanes(cmd.Flags().Lookup("lanes").Value.String())
		if err != nil {
			return cmdutil.UsageErr("--lanes: %v", err)
		}
		o.lanes = ls
	}
	return nil
}

func (a *app) runEye(o *linkOptions) error {
	if o.eye.margin {
		return a.runMargin(o)
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	r, err := linkeye.Read(ctx, ad, o.port, linkeye.Options{Lanes: o.eye.lanes})
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		err = a.WriteJSON(linkeye.Document{Device: o.df.Name, Backend: string(ad.Backend()), SourceRevision: db.Revision, Eye: r})
	} else {
		linkeye.WriteText(a.Stdout, r)
	}
	if err != nil {
		return err
	}
	if len(r.Verdicts) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}
