#!/bin/sh
# dunst's context menu (its `dmenu` setting) in the e2e tests: picks the
# notification button whose label is in $E2E_OUT/dmenu-pick, as a person
# clicking it would. dunst lists each button as "#<label> (<summary>) [id,key]";
# the file holds "#<label> (" and perhaps the start of the summary.
want=$(cat "$E2E_OUT/dmenu-pick")
grep -m1 -F "$want"
