package core

import (
	"reflect"
	"testing"
	"time"
)

// TestCloneSharesNothing: a clone of a record with every field set is
// equal to it and shares no list, map or pointer with it, whatever fields
// the type has: a field added without Clone copying it fails here. A clone
// of the zero record keeps nil as nil.
func TestCloneSharesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		full  any // a pointer to a record to fill
		clone func(any) any
		zero  any
	}{
		{"installation", &Installation{}, func(v any) any { return v.(*Installation).Clone() }, &Installation{}},
		{"session", &Session{}, func(v any) any { return v.(*Session).Clone() }, &Session{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fillAll(reflect.ValueOf(tc.full).Elem())
			c := tc.clone(tc.full)
			if !reflect.DeepEqual(c, tc.full) {
				t.Fatalf("clone differs:\n%+v\n%+v", c, tc.full)
			}
			if path, shared := sharedRef(reflect.ValueOf(tc.full).Elem(), reflect.ValueOf(c).Elem(), tc.name); shared {
				t.Fatalf("the clone shares %s with the original", path)
			}
			if z := tc.clone(tc.zero); !reflect.DeepEqual(z, tc.zero) {
				t.Fatalf("clone of the zero record: %+v", z)
			}
		})
	}
}

var timeType = reflect.TypeFor[time.Time]()

// fillAll sets every field reachable from v to a value that is not zero:
// each list and map one element, each pointer a value.
func fillAll(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillAll(k)
		fillAll(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	default:
		panic("fillAll: no value for a " + v.Kind().String() + ": teach the test this kind")
	}
}

// sharedRef reports the first list, map or pointer that a and b (of one
// type) share, by its path.
func sharedRef(a, b reflect.Value, path string) (string, bool) {
	if a.Type() == timeType {
		return "", false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Map:
		if !a.IsNil() && a.UnsafePointer() == b.UnsafePointer() {
			return path, true
		}
		if a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() {
			return sharedRef(a.Elem(), b.Elem(), path)
		}
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Index(0).Addr().UnsafePointer() == b.Index(0).Addr().UnsafePointer() {
			return path, true
		}
		for i := range min(a.Len(), b.Len()) {
			if p, shared := sharedRef(a.Index(i), b.Index(i), path+"[i]"); shared {
				return p, true
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p, shared := sharedRef(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); shared {
					return p, true
				}
			}
		}
	}
	return "", false
}
