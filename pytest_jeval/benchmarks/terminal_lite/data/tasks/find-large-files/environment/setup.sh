set -e
mkdir -p data/deep/er data/logs data/empty
head -c 5000 /dev/zero > data/big.bin
head -c 1000 /dev/zero > data/exact.bin
head -c 20 /dev/zero > data/small.txt
head -c 70000 /dev/zero > data/deep/er/huge.dat
head -c 999 /dev/zero > data/deep/near.dat
head -c 1001 /dev/zero > data/logs/old.log
