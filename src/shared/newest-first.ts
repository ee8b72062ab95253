/**
 * A Map kept as a bounded memory of the newest entries: JavaScript's Map
 * iterates in insertion order, so an entry re-inserted on each use is the
 * newest, and the first one the oldest, dropped once there are too many.
 */
export function keepNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key); // re-inserted last: the Map's order is the entries' age
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
