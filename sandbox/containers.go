package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Container is one session's sandbox container as the engine lists it.
type Container struct {
	SessionID string
	Name      string
	ID        string
	// State is the engine's: created, running, exited, …; a hibernated
	// sandbox is an exited container its next command starts again.
	State string
	// Status is the engine's summary ("Up 5 minutes").
	Status  string
	Created time.Time
}

// Containers lists the deployment's session sandboxes in the engine,
// newest first. Each replica runs its sandboxes in its own engine, so
// these are this replica's.
func (d *Docker) Containers(ctx context.Context) ([]Container, error) {
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment, LabelRole+"=sandbox")
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	out := make([]Container, 0, len(cs.Items))
	for _, c := range cs.Items {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, Container{SessionID: c.Labels[LabelSession], Name: name, ID: c.ID, State: string(c.State),
			Status: c.Status, Created: time.Unix(c.Created, 0).UTC()})
	}
	slices.SortStableFunc(out, func(a, b Container) int { return b.Created.Compare(a.Created) })
	return out, nil
}
