const { PGlite } = require('@electric-sql/pglite');
(async () => {
  let t = Date.now();
  const db = await PGlite.create('memory://');
  console.log('boot1 ms', Date.now() - t);
  t = Date.now();
  const db2 = await PGlite.create('memory://');
  console.log('boot2 ms', Date.now() - t);
  if (db.clone) { t = Date.now(); const c = await db.clone(); console.log('clone ms', Date.now() - t); }
  t = Date.now();
  const dump = await db.dumpDataDir('none');
  console.log('dump ms', Date.now() - t, dump.size);
  t = Date.now();
  const db3 = await PGlite.create({ loadDataDir: dump });
  console.log('load ms', Date.now() - t);
})();
