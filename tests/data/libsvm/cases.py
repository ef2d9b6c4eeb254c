"""The LibSVM files and LibSVMIter arguments tests/io/test_libsvm_iter.py checks against MXNet
1.9.1 (make_fixture.py writes the files and records MXNet's batches into expected.json)."""
FILES = {
    "data.t": "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n",
    "label.t": "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n",
    "ten.t": "".join(f"{i} 0:{i} 3:{i / 4}\n" for i in range(1, 11)),
}
CASES = {
    "with_labels": dict(data_libsvm="data.t", label_libsvm="label.t", data_shape=(3,),
                        label_shape=(3,), batch_size=3),
    "dense_labels": dict(data_libsvm="data.t", data_shape=(3,), batch_size=3),
    "small_batch": dict(data_libsvm="ten.t", data_shape=(4,), batch_size=4),
    "big_batch": dict(data_libsvm="ten.t", data_shape=(4,), batch_size=12),
    "part0": dict(data_libsvm="ten.t", data_shape=(4,), batch_size=2, num_parts=3,
                  part_index=0),
    "part1": dict(data_libsvm="ten.t", data_shape=(4,), batch_size=2, num_parts=3,
                  part_index=1),
    "part2": dict(data_libsvm="ten.t", data_shape=(4,), batch_size=2, num_parts=3,
                  part_index=2),
}

