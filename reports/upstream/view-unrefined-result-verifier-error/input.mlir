module {
  func.func @view_then_slice(%arg0: !torch.vtensor<[1,?,192],f32>) -> !torch.vtensor<[?,?,?,1,?],f32> {
    %int4 = torch.constant.int 4
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int3 = torch.constant.int 3
    %int16 = torch.constant.int 16
    %0 = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,192],f32>, !torch.int -> !torch.int
    %1 = torch.prim.ListConstruct %int1, %0, %int4, %int3, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.view %arg0, %1 : !torch.vtensor<[1,?,192],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?,?],f32>
    %3 = torch.aten.slice.Tensor %2, %int3, %int0, %int1, %int1 : !torch.vtensor<[?,?,?,?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?,?,1,?],f32>
    return %3 : !torch.vtensor<[?,?,?,1,?],f32>
  }
  func.func @view_then_permute(%arg0: !torch.vtensor<[1,?,64],f32>) {
    %int1 = torch.constant.int 1
    %int0 = torch.constant.int 0
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %int4 = torch.constant.int 4
    %int16 = torch.constant.int 16
    %0 = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,64],f32>, !torch.int -> !torch.int
    %1 = torch.prim.ListConstruct %int1, %0, %int4, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.view %arg0, %1 : !torch.vtensor<[1,?,64],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?],f32>
    %3 = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %4 = torch.aten.permute %2, %3 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?],f32>
    return
  }
}
