import { sqlIdent, sqlIn, sqlLiteral, sqlString } from './sql.js';

describe('sql', () => {
  describe(sqlString.name, () => {
    it('should double single quotes and keep everything else literal', () => {
      expect(sqlString("it's")).toBe("'it''s'");
      expect(sqlString("x' OR '1'='1")).toBe("'x'' OR ''1''=''1'");
      expect(sqlString('back\\slash "dq" ; -- %_')).toBe('\'back\\slash "dq" ; -- %_\'');
      expect(sqlString('')).toBe("''");
    });

    it('should refuse NUL characters', () => {
      expect(() => sqlString('a\u0000b')).toThrow(RangeError);
    });
  });

  describe(sqlLiteral.name, () => {
    it('should render numbers, booleans and strings', () => {
      expect(sqlLiteral(0.5)).toBe('0.5');
      expect(sqlLiteral(-3)).toBe('-3');
      expect(sqlLiteral(true)).toBe('TRUE');
      expect(sqlLiteral("o'k")).toBe("'o''k'");
      expect(() => sqlLiteral(Number.NaN)).toThrow(RangeError);
      expect(() => sqlLiteral(Infinity)).toThrow(RangeError);
    });
  });

  describe(sqlIdent.name, () => {
    it('should quote safe names and refuse anything else', () => {
      expect(sqlIdent('f_tags')).toBe('`f_tags`');
      expect(() => sqlIdent('a`; drop')).toThrow(RangeError);
      expect(() => sqlIdent('1abc')).toThrow(RangeError);
    });
  });

  describe(sqlIn.name, () => {
    it('should build an IN list of escaped strings', () => {
      expect(sqlIn('id', ['a', "b'c"])).toBe("`id` IN ('a', 'b''c')");
    });
  });
});
