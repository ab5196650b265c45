chmod a+x bin/README
