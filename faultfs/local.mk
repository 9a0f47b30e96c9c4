# faultfs: nothing built here yet.
