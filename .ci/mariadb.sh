#!/usr/bin/env bash
# Start a local MariaDB for the MySQL-backend contract tests (root, Debian 12; idempotent).
# Afterwards: mysql://compendium:compendium@127.0.0.1:3306/compendium_test answers.
set -euo pipefail

if ! command -v mariadbd >/dev/null 2>&1 && ! command -v mysqld >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
fi

answers() { mariadb-admin --protocol=socket -uroot ping >/dev/null 2>&1; }

if ! answers; then
  install -d -o mysql -g mysql /run/mysqld
  if [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  # Only loopback: the test server must never be reachable from outside the machine.
  nohup mysqld_safe --user=mysql --bind-address=127.0.0.1 --port=3306 \
    >/var/log/compendium-mariadb.log 2>&1 &
  for _ in $(seq 1 60); do
    answers && break
    sleep 1
  done
  answers || { echo "mariadb did not start; see /var/log/compendium-mariadb.log" >&2; exit 1; }
fi

mariadb --protocol=socket -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS compendium_test CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER IF NOT EXISTS 'compendium'@'localhost' IDENTIFIED BY 'compendium';
CREATE USER IF NOT EXISTS 'compendium'@'127.0.0.1' IDENTIFIED BY 'compendium';
GRANT ALL PRIVILEGES ON compendium_test.* TO 'compendium'@'localhost';
GRANT ALL PRIVILEGES ON compendium_test.* TO 'compendium'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
echo "mariadb ready: mysql://compendium:compendium@127.0.0.1:3306/compendium_test"
