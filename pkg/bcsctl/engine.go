package bcsctl

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// engineConfigView is what GET /v1/engine/config shows: the values by
// name, which of them were set at run time, and by whom.
type engineConfigView struct {
	values map[string]json.RawMessage
	set    []string
	by     string
}

func (v *engineConfigView) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	var meta struct {
		Set []string `json:"set"`
		By  string   `json:"by"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return err
	}
	for _, name := range []string{"set", "by", "updatedAt"} {
		delete(fields, name)
	}
	v.values, v.set, v.by = fields, meta.Set, meta.By
	return nil
}

// engineConfigTable lists the settings by name: value, and whether it is
// the flag's or was set at run time.
func engineConfigTable(v engineConfigView) *table {
	t := &table{header: []string{"SETTING", "VALUE", "FROM"}}
	for _, name := range slices.Sorted(maps.Keys(v.values)) {
		value := string(v.values[name])
		if s, err := strconv.Unquote(value); err == nil {
			value = s
		}
		from := "flag"
		if slices.Contains(v.set, name) {
			from = "run time"
		}
		t.rows = append(t.rows, []string{name, cell(value), from})
	}
	return t
}

// writeEngineConfig prints the table, and who set the values last.
func writeEngineConfig(w io.Writer, v engineConfigView) error {
	if err := engineConfigTable(v).write(w, ""); err != nil {
		return err
	}
	if v.by == "" {
		return nil
	}
	_, err := fmt.Fprintf(w, "(last set at run time by %s)\n", v.by)
	return err
}

func (c *cli) engineCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Read and change the scheduling engine's configuration",
	}
	config := c.engineConfigCommand()
	config.AddCommand(c.engineConfigSetCommand())
	cmd.AddCommand(config)
	return cmd
}

func (c *cli) engineConfigCommand() *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the engine's configuration: each value, and whether the flag gives it or it was set at run time",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var v engineConfigView
			raw, err := c.client.get(cmd.Context(), "/v1/engine/config", nil, &v)
			if err != nil {
				return err
			}
			if out.raw() {
				return printRaw(c.env.Out, out.format, raw)
			}
			return writeEngineConfig(c.env.Out, v)
		},
	}
	out.add(cmd, "json", "yaml")
	return cmd
}

func (c *cli) engineConfigSetCommand() *cobra.Command {
	var out writeOutput
	cmd := &cobra.Command{
		Use:   "set NAME=VALUE…",
		Short: "Change the engine's configuration at run time (admin only); NAME=null gives a value back to its flag",
		Long: "Change the engine's configuration at run time (admin only): the leading scheduler takes it at once,\n" +
			"and it is kept in etcd over the flags, for every replica and after a restart. NAME=null gives a value\n" +
			"back to its flag. Durations are written as 30s or 5m, counts as numbers; e.g.\n" +
			"  bcsctl engine config set dependsGCDelay=1m maxLaunching=2000",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			patch := map[string]json.RawMessage{}
			for _, arg := range args {
				name, value, ok := strings.Cut(arg, "=")
				if !ok || name == "" {
					return usageErrorf("%q: want NAME=VALUE", arg)
				}
				patch[name] = engineValue(value)
			}
			var v engineConfigView
			raw, err := c.client.call(cmd.Context(), http.MethodPatch, "/v1/engine/config", nil, patch, &v)
			if err != nil {
				return err
			}
			if out.raw() {
				return out.done(c.env.Out, raw, "")
			}
			return writeEngineConfig(c.env.Out, v)
		},
	}
	out.add(cmd)
	return cmd
}

// engineValue is VALUE as JSON: null and numbers as they are, anything
// else a string (a duration); the server checks it.
func engineValue(s string) json.RawMessage {
	if _, err := strconv.Atoi(s); err == nil || s == "null" {
		return json.RawMessage(s)
	}
	return json.RawMessage(strconv.Quote(s))
}
