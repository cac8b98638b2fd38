package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// A person types a resource's name where a command takes its id (agent,
// environment, vault, credential). The API resolves agent and environment
// names itself; vaults and credentials are found here in their list. An
// unknown name is an error naming the closest one there is.

// maxPages bounds the pages a command reads to find a name: 100 pages of
// 1000 records, more than any gateway holds of the resources named.
const maxPages = 100

// listAll reads every page of a list.
func listAll[T any](ctx context.Context, list func(context.Context, client.ListParams) (*web.Page[T], error), id func(T) string) ([]T, error) {
	var all []T
	p := client.ListParams{Limit: 1000}
	for range maxPages {
		page, err := list(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			return all, nil
		}
		p.After = id(page.Data[len(page.Data)-1])
	}
	return all, nil
}

// find returns the record whose id is ref, else the one record named ref.
// Names are not unique: two records of one name are an error listing
// their ids, rather than a guess at which was meant.
func find[T any](kind, ref string, all []T, idName func(T) (string, string)) (T, error) {
	var zero T
	names := make([]string, 0, len(all))
	var named []T
	var ids []string
	for _, r := range all {
		id, name := idName(r)
		if ref == id {
			return r, nil
		}
		if ref == name {
			named = append(named, r)
			ids = append(ids, id)
		}
		names = append(names, name)
	}
	switch len(named) {
	case 0:
		return zero, notFound(kind, ref, names)
	case 1:
		return named[0], nil
	}
	noun, rest, _ := strings.Cut(kind, " ")
	if rest != "" {
		rest = " " + rest
	}
	return zero, fmt.Errorf("%d %ss%s are named %q: %s; give an id", len(named), noun, rest, ref, strings.Join(ids, ", "))
}

// notFound says that no kind is named ref, and which name is closest.
func notFound(kind, ref string, names []string) error {
	msg := fmt.Sprintf("no %s has the id or name %q", kind, ref)
	if near := command.Closest(ref, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return errors.New(msg)
}

// orClosest turns the API's not-found answer for ref, an id or a name it
// resolves itself, into an error naming the closest name of list.
func orClosest[T any](ctx context.Context, err error, kind, ref string, list func(context.Context, client.ListParams) (*web.Page[T], error), idName func(T) (string, string)) error {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		return err
	}
	all, lerr := listAll(ctx, list, func(r T) string { id, _ := idName(r); return id })
	if lerr != nil {
		return err
	}
	if _, ferr := find(kind, ref, all, idName); ferr != nil {
		return ferr
	}
	return err
}
