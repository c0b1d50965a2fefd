// Linux system interfaces the Glibc module leaves out: pipe2 (a GNU extension), pidfd,
// eventfd, inotify, signalfd and pthread_setname_np. Includes only.
#define _GNU_SOURCE 1
#include <unistd.h>
#include <fcntl.h>
#include <sys/pidfd.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <pthread.h>
