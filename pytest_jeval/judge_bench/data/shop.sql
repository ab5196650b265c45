-- A tiny shop database for the bundled `sql` judge gold set.
-- The sql evaluator builds a SQLite file from this script at runtime (no binary .db is committed).
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    joined TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_on TEXT NOT NULL
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL
);
INSERT INTO customers VALUES
    (1, 'Ada', 'London', '2023-01-15'),
    (2, 'Grace', 'New York', '2023-03-02'),
    (3, 'Linus', 'Helsinki', '2023-06-20'),
    (4, 'Margaret', 'Boston', '2024-02-11'),
    (5, 'Alan', 'London', '2024-05-30');
INSERT INTO products VALUES
    (1, 'Keyboard', 'hardware', 49.5),
    (2, 'Mouse', 'hardware', 19.0),
    (3, 'Monitor', 'hardware', 189.0),
    (4, 'Editor licence', 'software', 99.0),
    (5, 'Compiler licence', 'software', 249.0),
    (6, 'USB cable', 'accessories', 5.5);
INSERT INTO orders VALUES
    (1, 1, '2024-01-05'),
    (2, 1, '2024-02-10'),
    (3, 2, '2024-02-14'),
    (4, 3, '2024-03-01'),
    (5, 5, '2024-06-12'),
    (6, 2, '2024-07-04');
INSERT INTO order_items VALUES
    (1, 1, 1), (1, 2, 2),
    (2, 4, 1),
    (3, 3, 2), (3, 6, 3),
    (4, 5, 1), (4, 1, 1),
    (5, 2, 1),
    (6, 6, 10);
