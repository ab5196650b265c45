#ifndef UTIL_H
#define UTIL_H
long add(long a, long b);
#endif
