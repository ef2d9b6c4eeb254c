from libc.stdint cimport uint64_t

# Reserve n generator blocks of the random resource of device (dev_type, dev_id): the key and the
# first reserved block counter (see resource.pyx). Call with the GIL, in push order.
cdef int reserve_random(int dev_type, int dev_id, uint64_t n, uint64_t *key, uint64_t *base) except -1
