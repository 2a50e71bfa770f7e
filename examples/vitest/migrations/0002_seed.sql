INSERT INTO notes (text) VALUES ('first note');
